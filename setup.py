"""The one compiled piece: the fused time step of the tagger's inference scan
(tagger/modules/_fastscan.c). Optional: where it cannot be built (no C compiler), the install
goes on and the scan runs in torch."""

from setuptools import Extension, setup

# No -ffast-math: -fassociative-math would fold exp's rounding trick (x + 1.5·2^23) - 1.5·2^23 to
# x, and -ffinite-math-only or flush-to-zero must not reach the rest of the process.
COMPILE = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-freciprocal-math", "-fno-signed-zeros"]

setup(ext_modules=[Extension("tagger.modules._fastscan", ["tagger/modules/_fastscan.c"],
                             extra_compile_args=COMPILE, optional=True)])
