"""The int8 recipe (``onnx_model.RECIPE``): the fused float32 graph rebalanced on a calibration
text, then each weight product rewritten as an int8 one whose activation scales never depend
on the rest of the batch, so that a text gives the same vector alone or among others.

Two kinds of product, by what feeds them:

- fed by a LayerNorm (the fused Attention's query/key/value, the feed-forward up-projection):
  SmoothQuant's per-channel scales move from the input into the weights, after which the
  input's range is steady from text to text; it is quantized with one static step, sized on
  the calibration text (the cheapest int8 there is: one pass, no reduction);
- fed by the attention's output or the GELU (the attention's output projection, the
  feed-forward down-projection), whose ranges swing from token to token: each token (each row
  of the batch) gets its own step, from its own largest value, and the int32 products are
  scaled back row by row. The down-projection's few channels with huge values stay float32.

Run by the build child (``onnx_build``) with onnx and onnxruntime.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .onnx_model import INT8_FILE, OnnxBuildError, _runtime

# SmoothQuant's migration strength: a product's input channel j is divided by
# max|x_j| ** alpha / max|w_j| ** (1 - alpha). Mean cosine to float32 over 400 SciFact
# abstracts with this recipe: 0.4: 0.99879, 0.5: 0.99895, 0.6: 0.99903, 0.7: 0.99907, 0.8: 0.99901.
SMOOTHING_ALPHA = 0.6
# A down-projection input channel whose calibrated peak is this many times the median
# channel's (MiniLM: one channel at 14-25 against ~3 in layers 1-4, at one token per text)
# is computed in float32; at most this many channels per product.
OUTLIER_RATIO = 6.0
MAX_OUTLIER_CHANNELS = 8
# Texts the calibration runs (chat, notes, mail, a few other scripts), shipped with the package.
CALIBRATION_FILE = Path(__file__).with_name("calibration.txt")
CALIBRATION_BATCH = 8
# A row of zeros gets this largest value, so its step is never 0.
SMALLEST_PEAK = 1e-6
# The built graph must give vectors this close to float32's on the calibration texts (cosine),
# or the build fails: a recipe that onnxruntime runs wrongly never embeds a record.
BUILD_CHECK_COSINE = 0.98


class Levels(NamedTuple):
    """How many int8 steps each operand uses. x86 CPUs without int8 dot products (AVX2)
    multiply unsigned 8-bit activations by signed 8-bit weights and add each pair of products
    in 16 bits, saturating past 32,767 (255 x 127 x 2 = 64,770): one operand of each product
    keeps 7 bits there, so that every sum is exact."""

    static_weight: int  # weights of a static product round to -static_weight..static_weight
    token_weight: int  # weights of a per-token product
    token_activation: int  # per-token activations round to 128 (64) + -token_activation..token_activation
    token_zero: int

    @classmethod
    def for_cpu(cls, seven_bit: bool) -> Levels:
        """8-bit operands, or where pairs add in 16 bits 7-bit weights for static products
        (whose activations use all 256 steps) and 7-bit activations for per-token ones
        (measured better than 7-bit weights everywhere: mean cosine 0.99803 against 0.99745)."""
        return cls(64, 127, 63, 64) if seven_bit else cls(127, 127, 127, 128)


class ChannelRange(NamedTuple):
    """Each channel's smallest and largest value over the calibration texts' tokens."""

    low: np.ndarray
    high: np.ndarray

    @property
    def peak(self) -> np.ndarray:
        """Each channel's largest magnitude."""
        return np.maximum(-self.low, self.high)


class Plan(NamedTuple):
    """What the rebalanced graph's products become: float32 ones (the outlier channels'),
    static ones with the range of their input, and (the rest) per-token ones."""

    in_float32: set[str]
    static: dict[str, tuple[float, float]]


def quantize(source: Path, target: Path, model_dir: Path, spec: dict[str, Any], seven_bit: bool) -> None:
    """Write the int8 graph of the fused float32 graph ``source`` to ``target`` and check it
    against float32 (OnnxBuildError where it strays)."""
    import onnx

    model = onnx.load(str(source))
    plan = _rebalance(model.graph, _calibrate(model, model_dir, spec))
    _to_int8(model.graph, plan, Levels.for_cpu(seven_bit))
    onnx.save(model, str(target))
    del model
    _check(source, target, model_dir, spec)


def _weights(graph: Any) -> dict[str, Any]:
    """The graph's 2-D initializers (weight matrices) by name."""
    return {tensor.name: tensor for tensor in graph.initializer if len(tensor.dims) == 2}


def _is_product(node: Any, weights: dict[str, Any]) -> bool:
    """A product of an activation with a weight matrix: what int8 quantizes (a BERT layer's
    fused Attention holds the query, key and value weights; the other three are MatMuls)."""
    return node.op_type in ("MatMul", "Attention") and len(node.input) > 1 and node.input[1] in weights


def _tokenizer(model_dir: Path, spec: dict[str, Any]) -> Any:
    """The model's tokenizer, cutting at its limit and padding batches."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=spec["max_tokens"])
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0)
    return tokenizer


def _session(model: Any) -> Any:
    ort = _runtime()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _calibrate(model: Any, model_dir: Path, spec: dict[str, Any]) -> dict[str, ChannelRange]:
    """Each weight product's input: the range of each channel over the calibration texts'
    tokens (padding excluded), from the float32 graph."""
    from onnx import TensorProto, helper

    texts = _calibration_texts()
    weights = _weights(model.graph)
    inputs = sorted({node.input[0] for node in model.graph.node if _is_product(node, weights)})
    outputs = len(model.graph.output)
    model.graph.output.extend(helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in inputs)
    session = _session(model.SerializeToString())
    del model.graph.output[outputs:]
    tokenizer = _tokenizer(model_dir, spec)
    ranges: dict[str, ChannelRange] = {}
    for start in range(0, len(texts), CALIBRATION_BATCH):
        encodings = tokenizer.encode_batch(texts[start:start + CALIBRATION_BATCH])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        values = session.run(inputs, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
        tokens = mask.astype(bool)
        for name, value in zip(inputs, values):
            low, high = value[tokens].min(axis=0), value[tokens].max(axis=0)
            if name in ranges:
                low, high = np.minimum(ranges[name].low, low), np.maximum(ranges[name].high, high)
            ranges[name] = ChannelRange(low, high)
    return ranges


def _calibration_texts() -> list[str]:
    """The non-blank lines of CALIBRATION_FILE; OnnxBuildError where it is missing or empty."""
    try:
        texts = [line for line in CALIBRATION_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise OnnxBuildError(f"cannot read the calibration text {CALIBRATION_FILE} ({exc}): "
                             "reinstall vecbook") from None
    if not texts:
        raise OnnxBuildError(f"the calibration text {CALIBRATION_FILE} is empty: reinstall vecbook")
    return texts


def _rebalance(graph: Any, ranges: dict[str, ChannelRange]) -> Plan:
    """Rewrite the float32 graph in place so that int8 activations lose less, without changing
    what it computes; returns which products stay float32 and which get static steps.

    A product whose input comes from a LayerNorm (the fused Attention's query/key/value, the
    feed-forward up-projection) sees a few channels far larger than the rest, which would set
    its int8 step: its input is divided per channel by a scale that the weights' rows are
    multiplied by (SmoothQuant), and it is quantized with a static step. A feed-forward
    down-projection sees a channel or two with huge values at one token per text: those
    channels are zeroed in its int8 product and multiplied in a float32 product of their own,
    added back."""
    from onnx import NodeProto, numpy_helper

    weights = _weights(graph)
    producers = {output: node for node in graph.node for output in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    before: dict[int, list[Any]] = {}
    after: dict[int, list[Any]] = {}
    plan = Plan(set(), {})
    for number, node in enumerate(graph.node):
        if not _is_product(node, weights):
            continue
        node.name = node.name or f"{node.op_type}_product_{number}"  # the plan names nodes
        span = ranges[node.input[0]]
        weight = numpy_helper.to_array(weights[node.input[1]])
        source = producers.get(node.input[0])
        if node.op_type == "Attention" or (source is not None and source.op_type.endswith("LayerNormalization")):
            if uses[node.input[1]] == 1:  # a shared weight cannot take one product's scales
                before[number], scales = _smooth(graph, node, span.peak, weight, number)
                span = ChannelRange(span.low / scales, span.high / scales)
            plan.static[node.name] = (min(float(span.low.min()), 0.0), max(float(span.high.max()), 0.0))
        elif _projects_down(weight.shape) and uses[node.input[1]] == 1:
            split = _split_outliers(graph, node, span.peak, weight, number)
            if split is not None:
                before[number], after[number] = split
                plan.in_float32.add(before[number][-1].name)
    ordered = []
    for number, node in enumerate(graph.node):
        for part in (*before.get(number, []), node, *after.get(number, [])):
            ordered.append(NodeProto())
            ordered[-1].CopyFrom(part)  # a copy: the originals are cleared below
    del graph.node[:]
    graph.node.extend(ordered)
    return plan


def _smooth(graph: Any, node: Any, peak: np.ndarray, weight: np.ndarray, number: int) -> tuple[list[Any], np.ndarray]:
    """Divide ``node``'s input by per-channel scales and multiply its weight rows by them: the
    Mul node to insert before it, and the scales."""
    from onnx import helper, numpy_helper

    scales = (np.clip(peak, 1e-5, None) ** SMOOTHING_ALPHA
              / np.clip(np.abs(weight).max(axis=1), 1e-5, None) ** (1 - SMOOTHING_ALPHA))
    scales /= np.exp(np.log(scales).mean())  # geometric mean 1: the product's overall size stays
    graph_weight = next(tensor for tensor in graph.initializer if tensor.name == node.input[1])
    graph_weight.CopyFrom(numpy_helper.from_array((weight * scales[:, None]).astype(np.float32), node.input[1]))
    # Names carry the node's number: ONNX does not require node names to be unique.
    inverse, smoothed = f"{node.name}/smoothing_{number}", f"{node.input[0]}/smoothed_{number}"
    graph.initializer.append(numpy_helper.from_array((1 / scales).astype(np.float32), inverse))
    mul = helper.make_node("Mul", [node.input[0], inverse], [smoothed], name=f"{node.name}/Smooth_{number}")
    node.input[0] = smoothed
    return [mul], scales


def _split_outliers(graph: Any, node: Any, peak: np.ndarray, weight: np.ndarray,
                    number: int) -> tuple[list[Any], list[Any]] | None:
    """Take the input channels whose peak stands OUTLIER_RATIO times above the median channel's
    out of ``node``'s product into a float32 one: the nodes to insert before it (the float32
    product last) and after it (the sum), or None where no channel stands out."""
    from onnx import helper, numpy_helper

    channels = np.argsort(-peak, kind="stable")[:MAX_OUTLIER_CHANNELS]
    channels = np.sort(channels[peak[channels] > OUTLIER_RATIO * np.median(peak)])
    if not len(channels):
        return None
    keep = np.ones(len(peak), dtype=np.float32)
    keep[channels] = 0.0
    x, y, prefix = node.input[0], node.output[0], f"{node.name}/{number}"  # unique, as in _smooth
    graph.initializer.extend([numpy_helper.from_array(keep, f"{prefix}/kept"),
                              numpy_helper.from_array(channels.astype(np.int64), f"{prefix}/outliers"),
                              numpy_helper.from_array(weight[channels].astype(np.float32), f"{prefix}/outlier_weight")])
    inserted = [helper.make_node("Mul", [x, f"{prefix}/kept"], [f"{x}/kept_{number}"], name=f"{prefix}/Keep"),
                helper.make_node("Gather", [x, f"{prefix}/outliers"], [f"{x}/outliers_{number}"],
                                 name=f"{prefix}/Outliers", axis=-1),
                helper.make_node("MatMul", [f"{x}/outliers_{number}", f"{prefix}/outlier_weight"],
                                 [f"{y}/outliers_{number}"], name=f"{prefix}/OutlierProduct")]
    node.input[0], node.output[0] = f"{x}/kept_{number}", f"{y}/kept_{number}"
    join = helper.make_node("Add", [f"{y}/kept_{number}", f"{y}/outliers_{number}"], [y], name=f"{prefix}/Join")
    return inserted, [join]


def _projects_down(weight_shape: tuple[int, ...]) -> bool:
    """A weight matrix from a wider space to a narrower one: in a BERT layer, only the
    feed-forward output (intermediate size -> hidden size) is one."""
    return len(weight_shape) == 2 and weight_shape[0] > weight_shape[1]


def _to_int8(graph: Any, plan: Plan, levels: Levels) -> None:
    """Replace each weight product of the rebalanced graph but the float32 ones by its int8
    nodes (static or per token, as ``plan`` says), and drop the float32 weights they replace."""
    from onnx import NodeProto

    weights = _weights(graph)
    constants: list[Any] = []
    replaced: dict[int, list[Any]] = {}
    for number, node in enumerate(graph.node):
        if _is_product(node, weights) and node.name not in plan.in_float32:
            weight = weights[node.input[1]]
            if node.name in plan.static:
                replaced[number] = _static_product(node, weight, plan.static[node.name], levels, constants, number)
            else:
                replaced[number] = _token_product(node, weight, levels, constants, number)
    ordered = []
    for number, node in enumerate(graph.node):
        for part in replaced.get(number, [node]):
            ordered.append(NodeProto())
            ordered[-1].CopyFrom(part)
    del graph.node[:]
    graph.node.extend(ordered)
    graph.initializer.extend(constants)
    used = {name for node in graph.node for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def _int8_weight(weight: Any, levels: int) -> tuple[np.ndarray, np.ndarray]:
    """A weight matrix rounded to -levels..levels per output column, and each column's step."""
    from onnx import numpy_helper

    values = numpy_helper.to_array(weight).astype(np.float32)
    steps = np.abs(values).max(axis=0) / levels
    steps = np.where(steps > 0, steps, 1.0).astype(np.float32)
    return np.clip(np.round(values / steps), -levels, levels).astype(np.int8), steps


def _constant(constants: list[Any], name: str, value: Any) -> str:
    from onnx import numpy_helper

    constants.append(numpy_helper.from_array(np.asarray(value), name))
    return name


def _static_product(node: Any, weight: Any, span: tuple[float, float], levels: Levels, constants: list[Any],
                    number: int) -> list[Any]:
    """``node`` with its input rounded to 256 steps over ``span`` (its calibrated range, 0
    included): QuantizeLinear, then an integer product scaled back as it is written."""
    from onnx import helper

    low, high = span
    step = max(high - low, SMALLEST_PEAK) / 255
    prefix = f"{node.name}/int8_{number}"
    zero = _constant(constants, f"{prefix}/zero", np.uint8(np.clip(round(-low / step), 0, 255)))
    scale = _constant(constants, f"{prefix}/step", np.float32(step))
    values, steps = _int8_weight(weight, levels.static_weight)
    quantized = helper.make_node("QuantizeLinear", [node.input[0], scale, zero], [f"{prefix}/quantized"],
                                 name=f"{prefix}/Quantize")
    int8_weight = _constant(constants, f"{prefix}/weight", values)
    weight_steps = _constant(constants, f"{prefix}/weight_steps", steps)
    if node.op_type == "Attention":  # input, weights, bias, mask index; QAttention takes the same attributes
        weight_zero = _constant(constants, f"{prefix}/weight_zero", np.zeros(len(steps), dtype=np.int8))
        product = helper.make_node("QAttention", [f"{prefix}/quantized", int8_weight, node.input[2], scale,
                                                  weight_steps, node.input[3], zero, weight_zero],
                                   list(node.output), name=f"{prefix}/QAttention", domain="com.microsoft")
        product.attribute.extend(node.attribute)
    else:
        product = helper.make_node("MatMulIntegerToFloat", [f"{prefix}/quantized", int8_weight, scale, weight_steps,
                                                            zero], list(node.output), name=f"{prefix}/Product",
                                   domain="com.microsoft")
    return [quantized, product]


def _token_product(node: Any, weight: Any, levels: Levels, constants: list[Any], number: int) -> list[Any]:
    """``node`` (a MatMul) with each row of its input (each token) rounded to steps of its own
    largest magnitude: the integer product, scaled back by the weight's steps, then by each
    row's. One QuantizeLinear per row step (per axis), on the input seen as rows x channels."""
    from onnx import helper

    x, prefix = node.input[0], f"{node.name}/int8_{number}"
    values, steps = _int8_weight(weight, levels.token_weight)
    zero = _constant(constants, f"{prefix}/zero", np.uint8(levels.token_zero))

    def step(name: str, op: str, inputs: list[str], **attributes: Any) -> Any:
        return helper.make_node(op, inputs, [f"{prefix}/{name}"], name=f"{prefix}/{name}", **attributes)

    return [
        step("top", "ReduceMax", [x], axes=[-1], keepdims=1),
        step("bottom", "ReduceMin", [x], axes=[-1], keepdims=1),
        step("minus_bottom", "Neg", [f"{prefix}/bottom"]),
        step("peak", "Max", [f"{prefix}/top", f"{prefix}/minus_bottom",
                             _constant(constants, f"{prefix}/smallest_peak", np.float32(SMALLEST_PEAK))]),
        step("row_steps", "Mul", [f"{prefix}/peak", _constant(constants, f"{prefix}/per_level",
                                                              np.float32(1 / levels.token_activation))]),
        step("rows", "Reshape", [x, _constant(constants, f"{prefix}/rows_shape",
                                              np.array([-1, values.shape[0]], dtype=np.int64))]),
        step("row_step_list", "Reshape", [f"{prefix}/row_steps", _constant(constants, f"{prefix}/list_shape",
                                                                            np.array([-1], dtype=np.int64))]),
        step("row_count", "Shape", [f"{prefix}/row_step_list"]),
        step("row_zeros", "Expand", [zero, f"{prefix}/row_count"]),
        step("quantized_rows", "QuantizeLinear", [f"{prefix}/rows", f"{prefix}/row_step_list", f"{prefix}/row_zeros"],
             axis=0),
        step("input_shape", "Shape", [x]),
        step("quantized", "Reshape", [f"{prefix}/quantized_rows", f"{prefix}/input_shape"]),
        step("unscaled", "MatMulIntegerToFloat", [f"{prefix}/quantized", _constant(constants, f"{prefix}/weight", values),
                                                  _constant(constants, f"{prefix}/one", np.float32(1)),
                                                  _constant(constants, f"{prefix}/weight_steps", steps), zero],
             domain="com.microsoft"),
        helper.make_node("Mul", [f"{prefix}/unscaled", f"{prefix}/row_steps"], list(node.output),
                         name=f"{prefix}/RowScale"),
    ]


def _check(source: Path, target: Path, model_dir: Path, spec: dict[str, Any]) -> None:
    """Run the first calibration texts through both graphs: OnnxBuildError where onnxruntime
    cannot run the int8 graph or its vectors stray from float32's."""
    texts = _calibration_texts()[:CALIBRATION_BATCH]
    encodings = _tokenizer(model_dir, spec).encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    expected = _session(str(source)).run(None, feed)[0]
    try:
        states = _session(str(target)).run(None, feed)[0]
    except Exception as exc:  # noqa: BLE001 - whatever onnxruntime reports is the build's failure
        raise OnnxBuildError(f"onnxruntime cannot run the int8 graph {INT8_FILE}: {exc}") from None
    a, b = ((values * mask[:, :, None]).sum(axis=1) for values in (expected, states))
    cosine = float(((a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))).min())
    if not cosine >= BUILD_CHECK_COSINE:
        raise OnnxBuildError(f"the int8 graph strays from float32 (cosine {cosine:.3f} on the calibration text)")
