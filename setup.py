"""The one compiled piece: the fused time step of the tagger's inference scan and the bf16 kernels
of the torch-free runtime (tagger/modules/_fastscan.c). Optional: where it cannot be built (no C
compiler), the install goes on and the scan runs in torch; where only the bf16 kernels cannot (a
compiler or assembler without AMX), it is built without them."""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# No -ffast-math: -fassociative-math would fold exp's rounding trick (x + 1.5·2^23) - 1.5·2^23 to
# x, and -ffinite-math-only or flush-to-zero must not reach the rest of the process.
COMPILE = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-freciprocal-math", "-fno-signed-zeros"]


class BuildExt(build_ext):
    """Builds the extension, and again without the bf16 kernels if that fails."""

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception:  # noqa: BLE001 - any failure of the compiler: try the smaller build
            ext.define_macros = [*ext.define_macros, ("TAGGER_NO_BF16_KERNELS", "1")]
            super().build_extension(ext)


setup(ext_modules=[Extension("tagger.modules._fastscan", ["tagger/modules/_fastscan.c"],
                             extra_compile_args=COMPILE, optional=True)],
      cmdclass={"build_ext": BuildExt})
