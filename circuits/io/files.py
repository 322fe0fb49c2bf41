"""Model files: .npz (numpy only) or .safetensors, TransformerLens-style arrays plus the JSON config; nothing pickled.

Sizes are checked from zip directories and array headers against sizes.MAX_BYTES before any array is read.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from circuits.errors import CircuitError
from circuits.io import sizes
from circuits.io.config import (
    CONFIG_KEY,
    METADATA_KEY,
    check_config,
    model_config,
    parse_config,
    tl_keys,
)
from circuits.io.reader import IGNORED_SUFFIXES, first_line
from circuits.io.sizes import bytes_text
from circuits.io.transformer_lens import from_tl_state_dict, to_tl_state_dict
from circuits.model.transformer import Model

SAVED_DTYPES = ("float64", "float32")


def save(model: Model, path: str | Path, dtype: str = "float64") -> Path:
    """Write `model` to .safetensors (recommended: read without unpacking, header checked first) or .npz (numpy
    only): TransformerLens-style arrays plus the JSON config. `dtype="float32"` stores the weights rounded to
    float32, half the size; they are read back as float64 of those values."""
    path = Path(path)
    if str(dtype) not in SAVED_DTYPES:
        raise CircuitError(f"{path}: dtype={dtype!r} is not one circuits saves; choose {' or '.join(SAVED_DTYPES)}")
    config = json.dumps(model_config(model))
    arrays = {k: np.ascontiguousarray(v, dtype=str(dtype)) for k, v in to_tl_state_dict(model).items()}
    if path.suffix == ".npz":
        np.savez(path, **arrays, **{CONFIG_KEY: np.frombuffer(config.encode("utf-8"), dtype=np.uint8)})
    elif path.suffix == ".safetensors":
        save_file = _safetensors(path).save_file
        save_file(arrays, str(path), metadata={METADATA_KEY: config})
    else:
        raise CircuitError(f"{path}: choose a file ending in .npz or .safetensors")
    return path


def load(path: str | Path) -> Model:
    """Read a model written by `save`; a damaged file or a wrong key is a one-line CircuitError naming both."""
    path = Path(path)
    if not path.is_file():
        from circuits.io.paths import is_loop

        why = (
            "a symlink loop (it never reaches a file)"
            if is_loop(path)
            else "a folder, not a model file"
            if path.is_dir()
            else "not a regular file (a named pipe or a device?)"
            if path.exists()
            else "no such file"
        )
        raise CircuitError(f"{path}: {why}")
    if path.suffix == ".safetensors":
        return _load_safetensors(path)
    if path.suffix != ".npz":
        raise CircuitError(f"{path}: choose a file ending in .npz or .safetensors")
    return _load_npz(path)


def _load_npz(path: Path) -> Model:
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic[:1] == b"\x80":
        raise CircuitError(f"{path}: refusing to load pickled data; circuits reads plain arrays only")
    if magic.startswith(b"\x93NUMPY"):
        with open(path, "rb") as f:
            dtype, _, _ = _npy_header(f, path, "the file")
        if dtype.hasobject:
            raise CircuitError(f"{path}: refusing to load pickled data; circuits reads plain arrays only")
        raise CircuitError(f"{path}: holds a single array, not an .npz archive of a circuits model")
    if not magic.startswith(b"PK"):
        raise CircuitError(f"{path}: not a readable .npz file (it is not a zip archive of arrays)")
    try:
        with zipfile.ZipFile(path) as archive:
            # Names and sizes come from the zip directory and the .npy headers; no array is read before
            # the config has said which keys belong to the model.
            members = _npz_members(archive, path)
            config = _npz_config(archive, members.pop(CONFIG_KEY), path)
            cfg = check_config(config, str(path))
            _check_keys(members, cfg, str(path))
            return from_tl_state_dict(_NpzArrays(archive, members), cfg, source=str(path))
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError) as e:
        raise CircuitError(f"{path}: not a readable .npz file ({first_line(e)})") from None


def _npy_header(f, path: Path, what: str) -> tuple[np.dtype, tuple, int]:
    """(dtype, shape, header bytes) of the .npy at f's position, reading the header only."""
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f".npy format version {version[0]}.{version[1]} is not read")
    except (ValueError, SyntaxError, TypeError, EOFError) as e:
        raise CircuitError(f"{path}: {what} is not a readable .npy array ({first_line(e)})") from None
    return dtype, tuple(shape), f.tell()


def _npz_members(archive: zipfile.ZipFile, path: Path) -> dict[str, tuple[zipfile.ZipInfo, np.dtype, tuple]]:
    """Every member's key, dtype and shape, checked against the size limits from directory and headers alone."""
    infos = archive.infolist()
    names = {i.filename for i in infos}
    if CONFIG_KEY + ".npy" not in names:
        if CONFIG_KEY in names:
            raise CircuitError(
                f"{path}: member {CONFIG_KEY!r} has no .npy suffix; circuits .npz files hold "
                "only .npy arrays, as np.savez writes them"
            )
        raise CircuitError(
            f"{path}: key {CONFIG_KEY!r} is missing; this .npz was not written by circuits.io.export.save"
        )
    members, total = {}, 0
    for info in infos:
        if not info.filename.endswith(".npy"):
            raise CircuitError(
                f"{path}: member {info.filename!r} is not an .npy array; circuits .npz files hold "
                "only the arrays np.savez writes"
            )
        key = info.filename.removesuffix(".npy")
        if key in members:
            raise CircuitError(f"{path}: key {key!r} is stored twice")
        if info.file_size > sizes.MAX_BYTES:
            raise CircuitError(
                f"{path}: key {key!r} declares {bytes_text(info.file_size)}, beyond the "
                f"{bytes_text(sizes.MAX_BYTES)} circuits reads ({sizes.WHERE})"
            )
        with archive.open(info) as f:
            dtype, shape, header = _npy_header(f, path, f"key {key!r}")
        if dtype.hasobject:
            raise CircuitError(f"{path}: key {key!r} holds pickled objects; refusing to load it")
        count = math.prod(shape)
        need = count * max(dtype.itemsize, 8)  # every array becomes float64
        total += need
        if total > sizes.MAX_BYTES:
            size = f"{bytes_text(need)} as float64, beyond" if need > sizes.MAX_BYTES else "which takes the file beyond"
            raise CircuitError(
                f"{path}: key {key!r} declares shape {shape}, {size} the {bytes_text(sizes.MAX_BYTES)} "
                f"circuits reads ({sizes.WHERE})"
            )
        if header + count * dtype.itemsize != info.file_size:
            raise CircuitError(
                f"{path}: key {key!r} is damaged: its header declares shape {shape} of {dtype} "
                f"({bytes_text(count * dtype.itemsize)}) but the archive holds {bytes_text(info.file_size - header)}"
            )
        members[key] = (info, dtype, shape)
    return members


def _npz_config(archive: zipfile.ZipFile, member: tuple, path: Path) -> dict:
    info, dtype, shape = member
    if dtype != np.uint8 or len(shape) != 1:
        raise CircuitError(
            f"{path}: key {CONFIG_KEY!r} holds {dtype} values of shape {shape}, but the config is "
            "JSON text as utf-8 bytes (uint8, one dimension)"
        )
    if shape[0] > sizes.MAX_CONFIG_BYTES:
        raise CircuitError(
            f"{path}: key {CONFIG_KEY!r} declares {bytes_text(shape[0])} of config, beyond the "
            f"{bytes_text(sizes.MAX_CONFIG_BYTES)} circuits reads"
        )
    with archive.open(info) as f:
        data = np.lib.format.read_array(f, allow_pickle=False)
    return parse_config(data.tobytes(), path)


def _check_keys(members: Mapping, cfg: Mapping, source: str) -> None:
    """Refuse, before reading them, arrays the config does not describe."""
    expected = tl_keys(cfg)
    for key in members:
        if key not in expected and not key.endswith(IGNORED_SUFFIXES):
            raise CircuitError(f"{source}: unexpected key {key!r}; it is not part of the model its config describes")


class _NpzArrays(Mapping):
    """An .npz's arrays by key, each read from the archive only when asked for."""

    def __init__(self, archive: zipfile.ZipFile, members: Mapping):
        self.archive, self.members = archive, members

    def __getitem__(self, key: str) -> np.ndarray:
        with self.archive.open(self.members[key][0]) as f:
            return np.lib.format.read_array(f, allow_pickle=False)

    def __iter__(self):
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)


def _load_safetensors(path: Path) -> Model:
    st = _safetensors(path)
    try:
        with _safe_open(path) as f:
            metadata = f.metadata() or {}
            shapes = {key: f.get_slice(key).get_shape() for key in f.keys()}  # noqa: SIM118 (safe_open is no dict); from the header: no data read
    except Exception as e:  # noqa: BLE001 - safetensors raises its own error type for damaged headers and data
        raise CircuitError(f"{path}: not a readable .safetensors file ({first_line(e)})") from None
    if METADATA_KEY not in metadata:
        raise CircuitError(
            f"{path}: metadata {METADATA_KEY!r} is missing; for a Hugging Face checkpoint use "
            "circuits.io.hf.from_hf(its directory)"
        )
    total = sum(math.prod(shape) for shape in shapes.values()) * 8
    if total > sizes.MAX_BYTES:
        raise CircuitError(
            f"{path}: its arrays take {bytes_text(total)} as float64, beyond the {bytes_text(sizes.MAX_BYTES)} "
            f"circuits reads ({sizes.WHERE})"
        )
    cfg = check_config(parse_config(metadata[METADATA_KEY].encode("utf-8"), path), str(path))
    _check_keys(shapes, cfg, str(path))
    try:
        state = st.load_file(str(path))
    except Exception as e:  # noqa: BLE001 - as above
        raise CircuitError(f"{path}: not a readable .safetensors file ({first_line(e)})") from None
    return from_tl_state_dict(state, cfg, source=str(path))


def _safe_open(path: Path):
    from safetensors import safe_open

    return safe_open(str(path), framework="np")


def _safetensors(path: Path):
    try:
        import safetensors.numpy as st
    except ImportError:
        raise CircuitError(
            f'{path}: .safetensors needs the safetensors package: pip install "circuits-workbench[hf]" '
            "(or save to .npz)"
        ) from None
    return st
