"""The one compiled piece: the fused time step of the tagger's inference scan
(tagger/modules/_fastscan.c). Optional: where it cannot be built (no C compiler), the install
goes on and the scan runs in torch."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("tagger.modules._fastscan", ["tagger/modules/_fastscan.c"],
                             extra_compile_args=["-O3", "-fno-math-errno"], optional=True)])
