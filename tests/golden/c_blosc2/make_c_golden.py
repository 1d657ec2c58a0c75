"""Write the golden C-Blosc2 chunks, frames and arrays of this directory with the reference
library only (python-blosc2 4.14.1, bundling C-Blosc2 3.3.5). Run from anywhere, once:

    python tests/golden/c_blosc2/make_c_golden.py

It writes, next to this file:

* ``chunks/<name>.b2chunk``: single chunks from ``blosc2.compress2`` (every codec x a few
  filter pipelines x typesizes 1, 4, 8, all ``nthreads=1``), special-value chunks (zeros, NaN,
  value, uninit, taken from SChunks filled by C) and dictionary chunks;
* ``frames/<name>.b2frame``: contiguous frames (fixed and variable chunk sizes, metalayers and
  vlmeta, special offsets, a ``fill_special`` index) and ``frames/<name>.sframe/``, a sparse
  frame directory;
* ``arrays/<name>.b2nd``: b2nd arrays (2 and 3 dimensions, edge chunks with padding);
* ``expected/<name>.npy``: what C-Blosc2 decodes each of them to (for lossless chunks the input,
  shared per typesize as ``expected/input-ts<N>.npy``);
* ``manifest.json``: for every entry its file, the parameters that made it, its expected
  ``.npy`` and, for frames, the metalayers and vlmeta (as JSON).

The tests (tests/golden/test_c_golden.py) decode everything with pyblosc2 alone. Importing this
module has no side effects and needs only numpy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
CODECS = ["BLOSCLZ", "LZ4", "LZ4HC", "ZLIB", "ZSTD"]
#: pipeline name -> (filters, filters_meta); TRUNC_PREC keeps 10 mantissa bits
PIPELINES: dict[str, tuple[list[str], list[int]]] = {
    "shuffle": (["SHUFFLE"], [0]),
    "bitshuffle": (["BITSHUFFLE"], [0]),
    "delta+shuffle": (["DELTA", "SHUFFLE"], [0, 0]),
    "truncprec+shuffle": (["TRUNC_PREC", "SHUFFLE"], [10, 0]),
    "shuffle+bytedelta": (["SHUFFLE", "BYTEDELTA"], [0, 0]),
}
TYPESIZES = [1, 4, 8]
SPLITS = ["AUTO_SPLIT", "ALWAYS_SPLIT", "NEVER_SPLIT"]
CHUNK_NBYTES = 4096
BLOCKSIZE = 1024


def input_data(typesize: int) -> np.ndarray:
    """Compressible test data of 4 KiB, by integer arithmetic and exact float operations."""
    n = CHUNK_NBYTES // typesize
    i = np.arange(n, dtype=np.int64)
    noise = (i * 2654435761 >> 13) & 15
    if typesize == 1:
        return ((i // 16) % 256 ^ (noise & 1)).astype(np.uint8)
    if typesize == 4:
        return i.astype(np.float32) / np.float32(7) + noise.astype(np.float32) / np.float32(64)
    return i.astype(np.float64) / 7.0 + noise.astype(np.float64) / 64.0


def chunk_cases() -> list[dict[str, Any]]:
    """Every ``compress2`` chunk: codec x pipeline x typesize (TRUNC_PREC needs 4 or 8)."""
    cases = []
    k = 0
    for codec in CODECS:
        for pipe, (filters, metas) in PIPELINES.items():
            for ts in TYPESIZES:
                if pipe.startswith("truncprec") and ts == 1:
                    continue
                cases.append(
                    {
                        "name": f"{codec.lower()}-{pipe}-ts{ts}",
                        "codec": codec,
                        "clevel": 5,
                        "typesize": ts,
                        "filters": filters,
                        "filters_meta": metas,
                        "splitmode": SPLITS[k % 3],
                        "blocksize": BLOCKSIZE,
                        "lossy": pipe.startswith("truncprec"),
                    }
                )
                k += 1
    return cases


# -- writers (need blosc2) --------------------------------------------------------------------


def _save(name: str, array: np.ndarray) -> str:
    np.save(HERE / "expected" / f"{name}.npy", array, allow_pickle=False)
    return f"expected/{name}.npy"


def _params(blosc2: Any, case: dict[str, Any]) -> dict[str, Any]:
    return {
        "codec": blosc2.Codec[case["codec"]],
        "clevel": case["clevel"],
        "typesize": case["typesize"],
        "filters": [blosc2.Filter[f] for f in case["filters"]],
        "filters_meta": case["filters_meta"],
        "splitmode": blosc2.SplitMode[case["splitmode"]],
        "blocksize": case["blocksize"],
        "nthreads": 1,
    }


def write_chunks(blosc2: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    inputs = {ts: input_data(ts) for ts in TYPESIZES}
    for ts, data in inputs.items():
        _save(f"input-ts{ts}", data)
    for case in chunk_cases():
        data = inputs[case["typesize"]]
        chunk = blosc2.compress2(bytearray(data.tobytes()), **_params(blosc2, case))
        name = case["name"]
        (HERE / "chunks" / f"{name}.b2chunk").write_bytes(chunk)
        decoded = np.frombuffer(blosc2.decompress2(chunk), dtype=data.dtype)
        if case["lossy"]:  # the lossy filter runs before the codec: one result per typesize
            lossy = f"truncprec-ts{case['typesize']}"
            if not (HERE / "expected" / f"{lossy}.npy").exists():
                _save(lossy, decoded)
            assert np.array_equal(np.load(HERE / "expected" / f"{lossy}.npy"), decoded), name
            expected = f"expected/{lossy}.npy"
        else:
            assert np.array_equal(decoded, data), name
            expected = f"expected/input-ts{case['typesize']}.npy"
        out[name] = {**case, "file": f"chunks/{name}.b2chunk", "expected": expected}
    return out


def write_special_chunks(blosc2: Any) -> dict[str, Any]:
    """Special-value chunks as C synthesises them (SChunk.get_chunk) or writes them."""
    out: dict[str, Any] = {}
    fills: dict[str, tuple[str, Any, np.ndarray]] = {
        "special-zeros-f4": ("ZERO", None, np.zeros(1000, np.float32)),
        "special-nan-f4": ("NAN", None, np.full(1000, np.nan, np.float32)),
        "special-nan-f8": ("NAN", None, np.full(500, np.nan, np.float64)),
        "special-value-f4": ("VALUE", np.float32(1.5), np.full(1000, 1.5, np.float32)),
        "special-uninit-f4": ("UNINIT", None, np.zeros(1000, np.float32)),  # readers give zeros
    }
    for name, (kind, value, expected) in fills.items():
        ts = expected.dtype.itemsize
        s = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(typesize=ts, nthreads=1))
        s.fill_special(expected.size, blosc2.SpecialValue[kind], value=value)
        chunk = s.get_chunk(0)
        (HERE / "chunks" / f"{name}.b2chunk").write_bytes(chunk)
        out[name] = {
            "name": name,
            "special": kind,
            "typesize": ts,
            "file": f"chunks/{name}.b2chunk",
            "expected": _save(name, expected),
        }
    # compress2 itself turns an all-zero buffer into a special-zero chunk
    chunk = blosc2.compress2(bytes(4000), typesize=4, nthreads=1)
    (HERE / "chunks" / "compress2-zeros.b2chunk").write_bytes(chunk)
    out["compress2-zeros"] = {
        "name": "compress2-zeros",
        "special": "ZERO",
        "typesize": 4,
        "file": "chunks/compress2-zeros.b2chunk",
        "expected": _save("compress2-zeros", np.zeros(1000, np.float32)),
    }
    return out


def write_dict_chunks(blosc2: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    data = (np.arange(4_000) % 97 + (np.arange(4_000) // 1000)).astype("<i4")
    expected = _save("dict-input", data)
    for codec in ("ZSTD", "LZ4"):
        name = f"dict-{codec.lower()}-ts4"
        chunk = blosc2.compress2(
            bytearray(data.tobytes()),
            codec=blosc2.Codec[codec],
            clevel=5,
            typesize=4,
            use_dict=True,
            blocksize=2048,
            nthreads=1,
        )
        (HERE / "chunks" / f"{name}.b2chunk").write_bytes(chunk)
        assert blosc2.decompress2(chunk) == data.tobytes()
        out[name] = {
            "name": name,
            "codec": codec,
            "use_dict": True,
            "typesize": 4,
            "file": f"chunks/{name}.b2chunk",
            "expected": expected,
        }
    return out


def _frame_entry(blosc2: Any, name: str, path: Path, dtype: str, notes: str) -> dict[str, Any]:
    s = blosc2.open(str(path), mode="r")
    # chunk by chunk: C's s[:] divides by the chunk size, 0 for variable-size chunks
    raw = b"".join(s.decompress_chunk(n) for n in range(s.nchunks))
    data = np.frombuffer(raw, dtype=dtype)
    return {
        "name": name,
        "file": str(path.relative_to(HERE)),
        "notes": notes,
        "nchunks": s.nchunks,
        "chunksize": s.chunksize,
        "typesize": s.typesize,
        "meta": {k: _jsonable(s.meta[k]) for k in s.meta},
        "vlmeta": {k: _jsonable(v) for k, v in s.vlmeta.getall().items()},
        "expected": _save(name, data),
    }


def _jsonable(v: Any) -> Any:
    return json.loads(json.dumps(v, default=list))


def frame_recipes() -> dict[str, dict[str, Any]]:
    """name -> how the frame is made: SChunk arguments and the operations, in order.

    ``replay`` runs a recipe with python-blosc2 (here) or pyblosc2 (the tests, which compare
    the bytes where the project promises byte-identical output)."""
    i32 = np.arange(4_000, dtype="<i4") * 3 % 1000
    f8 = np.arange(1500, dtype="<f8") / 4
    zeros = np.zeros(500, "<i4")
    return {
        "fixed-zstd-meta-vlmeta": dict(
            codec="ZSTD",
            typesize=4,
            chunksize=2000,
            meta={"m1": [1, 2], "name": "golden"},
            ops=[
                *(("append", i32[k * 500 : (k + 1) * 500]) for k in range(4)),
                ("append", i32[2000:2170]),  # a short last chunk
                ("vlmeta", "info", {"a": 1, "t": (1, 2)}),
                ("vlmeta", "note", "hi"),
            ],
            dtype="<i4",
            notes="fixed chunk size, short last chunk, metalayers and vlmeta",
        ),
        "fixed-blosclz-special-offsets": dict(
            codec="BLOSCLZ",
            typesize=4,
            chunksize=2000,
            ops=[
                ("append", i32[:500]),
                ("append", zeros),  # stored as a 0x81... offset
                ("append", i32[500:1000]),
                ("append", zeros),
                ("append", i32[1000:1300]),
            ],
            dtype="<i4",
            notes="all-zero chunks stored as special offsets",
        ),
        "variable-lz4": dict(
            codec="LZ4",
            typesize=4,
            chunksize=2000,
            ops=[
                *(("append", i32[k * 500 : (k + 1) * 500]) for k in range(3)),
                ("append", i32[3000:3300]),
                ("insert", 1, np.full(500, 7, "<i4")),  # makes the chunk sizes variable
                ("vlmeta", "v", [1.5, "x"]),
            ],
            dtype="<i4",
            notes="variable chunk sizes after an insert",
        ),
        "fill-nan-f8": dict(
            codec="ZLIB",
            typesize=8,
            chunksize=3200,
            ops=[("fill_special", 1100, "NAN")],  # 3 chunks, the last short
            dtype="<f8",
            notes="fill_special: a repeated-value index chunk",
        ),
        "sparse-zlib": dict(
            codec="ZLIB",
            typesize=8,
            chunksize=4000,
            contiguous=False,
            meta={"kind": "sparse"},
            ops=[
                *(("append", f8[k * 500 : (k + 1) * 500]) for k in range(3)),
                ("vlmeta", "info", "sparse"),
            ],
            dtype="<f8",
            notes="sparse frame directory",
        ),
    }


def replay(lib: Any, recipe: dict[str, Any], path: Path) -> None:
    """Make the frame of ``recipe`` at ``path`` with ``lib`` (blosc2 or pyblosc2)."""
    s = lib.SChunk(
        chunksize=recipe["chunksize"],
        urlpath=str(path),
        contiguous=recipe.get("contiguous", True),
        mode="w",
        cparams=lib.CParams(
            codec=lib.Codec[recipe["codec"]], clevel=5, typesize=recipe["typesize"], nthreads=1
        ),
        dparams=lib.DParams(nthreads=1),
        **({"meta": recipe["meta"]} if "meta" in recipe else {}),
    )
    for op, *args in recipe["ops"]:
        if op == "append":
            s.append_data(args[0])
        elif op == "insert":
            s.insert_data(args[0], args[1], copy=True)
        elif op == "fill_special":
            s.fill_special(args[0], lib.SpecialValue[args[1]])
        else:
            s.vlmeta[args[0]] = args[1]
    del s


def write_frames(blosc2: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, recipe in frame_recipes().items():
        suffix = ".b2frame" if recipe.get("contiguous", True) else ".sframe"
        path = HERE / "frames" / f"{name}{suffix}"
        replay(blosc2, recipe, path)
        out[name] = _frame_entry(blosc2, name, path, recipe["dtype"], recipe["notes"])
    assert out["variable-lz4"]["chunksize"] == 0
    return out


def write_arrays(blosc2: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    arrays: dict[str, tuple[np.ndarray, dict[str, Any]]] = {
        "array3d-f4-zstd": (
            (np.arange(13 * 17 * 9, dtype=np.float32) / 8).reshape(13, 17, 9),
            dict(chunks=(6, 8, 5), blocks=(3, 4, 5), cparams=dict(codec=blosc2.Codec.ZSTD)),
        ),
        "array2d-i2-lz4": (
            (np.arange(35 * 23, dtype=np.int16) % 300).reshape(35, 23),
            dict(chunks=(16, 10), blocks=(8, 5), cparams=dict(codec=blosc2.Codec.LZ4)),
        ),
    }
    for name, (x, kw) in arrays.items():
        path = HERE / "arrays" / f"{name}.b2nd"
        kw["cparams"] = {**kw["cparams"], "clevel": 5, "nthreads": 1}
        blosc2.asarray(x, urlpath=str(path), mode="w", **kw)
        a = blosc2.open(str(path), mode="r")
        assert np.array_equal(a[...], x)
        out[name] = {
            "name": name,
            "file": f"arrays/{name}.b2nd",
            "shape": list(x.shape),
            "chunks": list(kw["chunks"]),
            "blocks": list(kw["blocks"]),
            "dtype": x.dtype.str,
            "expected": _save(name, x),
        }
    return out


def main() -> None:
    import blosc2

    assert blosc2.__version__ == "4.14.1", blosc2.__version__
    for sub in ("chunks", "frames", "arrays", "expected"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
        (HERE / sub).mkdir()
    manifest = {
        "made_with": f"python-blosc2 {blosc2.__version__} (C-Blosc2 {blosc2.VERSION_STRING})",
        "chunks": write_chunks(blosc2),
        "special_chunks": write_special_chunks(blosc2),
        "dict_chunks": write_dict_chunks(blosc2),
        "frames": write_frames(blosc2),
        "arrays": write_arrays(blosc2),
    }
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
