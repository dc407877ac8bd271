"""The same text gets the same vector alone and in any batch (issue 34): on every path this CPU
runs (int8 with both recipes, float32 on onnxruntime, float32 and bfloat16 on torch), a record's
vector does not depend on which other texts were embedded with it, so a restart without caches
ranks as the run that filled them."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import vecbook
from conftest import torch_embedder
from vecbook import onnx_build, onnx_model

MIXED = [
    "ok",
    "🙂",
    "Thanks!",
    "東京へのフェリーは八時に出ます。切符は駅で買えます。",
    "Die Fähre zur Insel fährt um acht Uhr ab; naïve café, crème brûlée.",
    "مرحبا، نلتقي غدا في المقهى قرب المحطة",
    "🎉🔥 party at 8 🍕🍺 bring snacks!! 🙌",
    "Привет, встретимся завтра в кафе у метро.",
    "Meeting moved to Thursday; bring the budget spreadsheet.",
    "Invoice 2024-0183: 1,250.00 EUR due 2024-03-31, paid by transfer.",
    "def double(x):\n    return x * 2  # the boiler's schedule, in code",
    "Bought a second-hand kayak and paddle for the summer. The seller threw in a life vest and a "
    "dry bag; we tried it on the lake on Sunday morning and it did not leak.",
    "Grandma's recipe: two cups flour, one egg, a pinch of salt. Mix, rest for an hour, roll thin, "
    "bake 40 minutes at 180 degrees until golden. Serve with butter and plum jam, or with cheese "
    "for those who do not like sweet things. It keeps three days in a tin.",
    "Notes from the planning call. " + "We agreed to move the launch, review the risks and price "
    "the new tickets before the board meets again next month. " * 6,
    "word " * 300,  # longer than a window: cut at the model's limit
    "Ünïcödé àccénts ñ ç ß ø å æ œ, ｆｕｌｌｗｉｄｔｈ, 한국어 문장도 있어요.",
]
# Alone, each of these is padded differently than in the batch (or not at all).
ALONE = [0, 1, 3, 4, 5, 6, 11, 14, 15]


@pytest.fixture(scope="module")
def int8_other_recipe(int8: vecbook.Embedder, tmp_path_factory: pytest.TempPathFactory) -> vecbook.Embedder:
    """The int8 recipe this CPU does not build (8-bit operands, or 7-bit ones), built apart.
    Export and fusion do not depend on the recipe: its folder starts with this CPU's float32
    graph and no int8 graph, so the build child quantizes only (as after a damaged int8 graph)."""
    native = onnx_model.recipe()
    other = f"{onnx_model.RECIPE}-7bit" if native == onnx_model.RECIPE else onnx_model.RECIPE
    cache = tmp_path_factory.mktemp("other-recipe")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(onnx_build, "recipe", lambda info=None: other)
        folder = onnx_build.build_folder(int8._path, cache)
        folder.mkdir()
        shutil.copyfile(int8.load().folder / onnx_model.FLOAT_FILE, folder / onnx_model.FLOAT_FILE)
        (folder / onnx_model.INT8_FILE).write_bytes(b"")
        onnx_build.write_manifest(int8._path, folder)
        (folder / onnx_model.INT8_FILE).unlink()
        model = vecbook.Embedder(precision="int8", model_cache=cache)
        model.load()
    assert model.load().folder.name.endswith(other)
    built = (model.load().folder / onnx_model.INT8_FILE).read_bytes()
    assert built and built != (int8.load().folder / onnx_model.INT8_FILE).read_bytes()  # the other recipe's graph
    return model


@pytest.fixture(scope="module")
def torch_float32() -> vecbook.Embedder:
    return torch_embedder(bfloat16=False)


@pytest.fixture(scope="module")
def torch_bfloat16() -> vecbook.Embedder:
    return torch_embedder(bfloat16=True)


@pytest.mark.parametrize("path", ["int8", "int8_other_recipe", "float32", "torch_float32", "torch_bfloat16"])
def test_a_text_gets_the_same_vector_alone_and_in_a_mixed_batch(path: str, request: pytest.FixtureRequest) -> None:
    model = request.getfixturevalue(path)
    assert model.load() and model.runtime == ("torch" if path.startswith("torch") else "onnxruntime")
    batch = model.encode(MIXED)
    assert batch.shape == (len(MIXED), 384)
    for i in ALONE:
        np.testing.assert_allclose(model.encode([MIXED[i]])[0], batch[i], rtol=0, atol=1e-6, err_msg=repr(MIXED[i]))
    # in other company: every other text, longest first, each twice
    others = [text for text in MIXED[::-2] for _ in range(2)]
    again = model.encode(others)
    for row, text in enumerate(others):
        np.testing.assert_allclose(again[row], batch[MIXED.index(text)], rtol=0, atol=1e-6, err_msg=repr(text))


def test_torch_batches_hold_texts_padded_to_one_length(torch_float32: vecbook.Embedder) -> None:
    """A torch batch pads its texts to a multiple of PAD_MULTIPLE tokens: texts that would pad to
    different lengths never share one (onnxruntime's batches need not: its vectors do not move)."""
    model = torch_float32._records_model()
    lengths = [3, 5, 15, 16, 17, 30, 33, 250, 256]
    _, batches = torch_float32._batches(list(range(len(lengths))), lengths, model)
    assert batches == [[0, 1, 2, 3], [4, 5], [6], [7, 8]]
    assert [model.padded_length(n) for n in (1, 16, 17, 250, 256)] == [16, 16, 32, 256, 256]
