"""The kernels' on-disk cache is keyed by every kernel module's source (numerics/kernels/_jit.py).

numba keys a cached kernel on its own file's timestamp; a kernel compiles in the helpers it calls
from other files, so an edit of a helper alone would leave the old machine code loaded. The cache
folder is named by a digest of all kernel modules: these tests check that the digest follows every
byte of every module and that a process compiling a kernel uses that folder."""

import os
import pathlib
import subprocess
import sys

from numerics.kernels import kernel_cache_dir, source_digest

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "numerics" / "kernels"


def _write(folder, files):
    for name, text in files.items():
        (folder / name).write_text(text)
    return sorted(folder.glob("*.py"))


def test_the_digest_changes_with_any_byte_of_any_module_and_with_a_name(tmp_path):
    files = {"kernel.py": "from .helper import h\n", "helper.py": "def h(x):\n    return x + 1\n"}
    first = source_digest(_write(tmp_path, files))
    assert source_digest(_write(tmp_path, files)) == first                       # same sources, same folder
    assert source_digest(_write(tmp_path, {"helper.py": "def h(x):\n    return x + 2\n"})) != first
    _write(tmp_path, files)
    (tmp_path / "helper.py").rename(tmp_path / "other.py")
    assert source_digest(sorted(tmp_path.glob("*.py"))) != first


def test_the_folder_is_named_by_the_digest_of_every_kernel_module(tmp_path):
    folder = kernel_cache_dir(base=tmp_path)
    assert folder == tmp_path / ("numba-" + source_digest(KERNELS.glob("*.py")))
    assert len(list(KERNELS.glob("*.py"))) >= 10      # sfc64, sgd_plane, erf_poly and the kernels that call them


def test_a_process_compiling_a_kernel_caches_in_that_folder(tmp_path):
    code = ("import numba, numerics.kernels.pgd_step\n"
            "from numerics.kernels import kernel_cache_dir\n"
            "print(numba.config.CACHE_DIR == str(kernel_cache_dir()), kernel_cache_dir().is_dir())\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"], out.stderr
    assert [p.name for p in tmp_path.iterdir()] == [kernel_cache_dir(base=tmp_path).name]
