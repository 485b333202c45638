#!/usr/bin/python3
"""tools/gen_conv_fixtures.py -> spec/fixtures/conv.lua

Expected values for spec/conv_spec.lua from PyTorch 1.13: forward values of
T.nn.functional's convolution, pooling and resampling functions and of the
matching nn modules (with their weights given), gradients of
loss = sum(out * W) for float64 cases, and PyTorch's error messages.

Every index the Lua side sees is 1-based: max_pool / adaptive_max_pool
return_indices + 1, embedding_bag indices and offsets + 1.

    /usr/bin/python3 tools/gen_conv_fixtures.py     (from the checkout root)
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1234)
cases = []


def rnd(*shape, dtype=torch.float64):
    # values with two decimals, so that the Lua literals are exact enough
    return (torch.randint(-200, 201, shape).to(torch.float64) / 100).to(dtype)


def tens(t):
    d = {"kind": "tensor", "dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape)}
    d["data"] = t.detach().reshape(-1).tolist()
    return d


def lua(v, ind=""):
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "0/0"
        if math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, (list, tuple)):
        return "{" + ",".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ",".join("%s=%s" % (k, lua(x)) for k, x in v.items()) + "}"
    raise TypeError(type(v))


def arg_of(a):
    if isinstance(a, torch.Tensor):
        return tens(a)
    if a is None:
        return {"kind": "nil"}
    return {"kind": "value", "value": list(a) if isinstance(a, tuple) else a}


def lua_opts(opts):
    out = {}
    for k, v in opts.items():
        if isinstance(v, torch.Tensor):
            v = tens(v + 1 if k == "offsets" else v)   # offsets: 1-based start positions
        elif k == "padding_idx" and isinstance(v, int) and v >= 0:
            v = v + 1                                  # a 1-based row; negative ones count from the end alike
        elif isinstance(v, tuple):
            v = list(v)
        out[k] = v
    return out


def fn_case(name, fn, targs, opts=None, lua_args=None, grad=False, note=None, tol=None, multi=False):
    """fn(*targs, **opts) in torch; the Lua call is F[fn](lua_args or targs..., opts)."""
    opts = opts or {}
    targs = [a.clone().requires_grad_(True) if grad and isinstance(a, torch.Tensor) and a.is_floating_point() else a
             for a in targs]
    c = {"name": name, "fn": fn, "args": [arg_of(a) for a in (lua_args or targs)], "opts": lua_opts(opts)}
    try:
        out = getattr(F, fn)(*targs, **opts)
    except Exception as e:  # noqa: BLE001
        c["error"] = str(e).split("\n")[0]
        cases.append(c)
        return
    outs = list(out) if isinstance(out, tuple) else [out]
    exp = []
    for i, o in enumerate(outs):
        o = o.detach()
        if o.dtype == torch.int64 and ("return_indices" in opts or multi):
            o = o + 1
        exp.append(tens(o))
    c["expect"] = exp
    if grad:
        W = rnd(*outs[0].shape, dtype=outs[0].dtype)
        (outs[0] * W).sum().backward()
        c["W"] = tens(W)
        c["grads"] = [tens(a.grad) if isinstance(a, torch.Tensor) and a.grad is not None else {"kind": "nil"}
                      for a in targs]
    if tol:
        c["tol"] = tol
    if note:
        c["note"] = note
    cases.append(c)


# ---- convolutions: values and gradients ------------------------------------
for dt in (torch.float32, torch.float64):
    g = dt == torch.float64
    fn_case("conv2d stride 2 pad 1 %s" % dt, "conv2d", [rnd(2, 3, 7, 6, dtype=dt), rnd(4, 3, 3, 3, dtype=dt), rnd(4, dtype=dt)],
            {"stride": 2, "padding": 1}, grad=g)
    fn_case("conv2d groups 2 dilation 2 %s" % dt, "conv2d", [rnd(1, 4, 9, 9, dtype=dt), rnd(6, 2, 3, 2, dtype=dt), None],
            {"groups": 2, "dilation": (2, 1), "padding": (2, 1)}, grad=g)
    fn_case("conv2d same, even kernel %s" % dt, "conv2d", [rnd(2, 2, 5, 6, dtype=dt), rnd(3, 2, 2, 4, dtype=dt), rnd(3, dtype=dt)],
            {"padding": "same"}, grad=g)
    fn_case("conv2d 1x1 %s" % dt, "conv2d", [rnd(3, 5, 4, 4, dtype=dt), rnd(2, 5, 1, 1, dtype=dt), rnd(2, dtype=dt)], grad=g)
    fn_case("conv1d same dilation 3 %s" % dt, "conv1d", [rnd(2, 3, 11, dtype=dt), rnd(2, 3, 4, dtype=dt), rnd(2, dtype=dt)],
            {"padding": "same", "dilation": 3}, grad=g)
    fn_case("conv1d unbatched stride 3 %s" % dt, "conv1d", [rnd(2, 10, dtype=dt), rnd(5, 2, 3, dtype=dt), None],
            {"stride": 3}, grad=g)
    fn_case("conv_transpose2d stride 2 output_padding 1 %s" % dt, "conv_transpose2d",
            [rnd(2, 4, 3, 4, dtype=dt), rnd(4, 3, 3, 3, dtype=dt), rnd(3, dtype=dt)],
            {"stride": 2, "padding": 1, "output_padding": 1}, grad=g)
    fn_case("conv_transpose2d groups dilation %s" % dt, "conv_transpose2d",
            [rnd(1, 4, 4, 3, dtype=dt), rnd(4, 1, 2, 3, dtype=dt), None],
            {"groups": 2, "dilation": (2, 1), "stride": (1, 2)}, grad=g)
    fn_case("conv_transpose1d stride 3 %s" % dt, "conv_transpose1d", [rnd(2, 2, 5, dtype=dt), rnd(2, 3, 4, dtype=dt), rnd(3, dtype=dt)],
            {"stride": 3, "padding": 2, "output_padding": 1}, grad=g)
# positional stride/padding after the bias
fn_case("conv2d positional stride, padding", "conv2d", [rnd(1, 2, 6, 6), rnd(3, 2, 3, 3), rnd(3), 2, 1])
fn_case("conv_transpose2d positional", "conv_transpose2d", [rnd(1, 2, 3, 3), rnd(2, 3, 2, 2), None, 2, 0, 1])
# integers: PyTorch 1.13 computes them exactly
fn_case("conv2d int64", "conv2d", [torch.randint(-5, 6, (1, 2, 4, 4)), torch.randint(-3, 4, (2, 2, 3, 3))], {"padding": 1})
# empty batch
fn_case("conv2d empty batch", "conv2d", [rnd(0, 2, 5, 5), rnd(3, 2, 3, 3), rnd(3)])

# ---- pooling ----------------------------------------------------------------------
x = rnd(2, 3, 7, 8)
x[0, 0, 1, 1] = float("nan")
fn_case("max_pool2d NaN propagates", "max_pool2d", [x, 3], {"stride": 2, "padding": 1, "return_indices": True})
fn_case("max_pool2d ties pick the first", "max_pool2d", [torch.ones(1, 1, 4, 4, dtype=torch.float64), 2], {"return_indices": True})
fn_case("max_pool2d ceil dilation grad", "max_pool2d", [rnd(1, 2, 9, 7), (3, 2)],
        {"stride": (2, 3), "padding": (1, 1), "dilation": (2, 1), "ceil_mode": True}, grad=True)
fn_case("max_pool1d grad", "max_pool1d", [rnd(2, 3, 10), 3], {"stride": 2, "padding": 1}, grad=True)
fn_case("max_pool2d -inf everywhere", "max_pool2d", [torch.full((1, 1, 2, 2), -math.inf, dtype=torch.float64), 2],
        {"return_indices": True})
fn_case("avg_pool2d count_include_pad false ceil grad", "avg_pool2d", [rnd(2, 2, 7, 6), 3],
        {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}, grad=True)
fn_case("avg_pool2d divisor_override grad", "avg_pool2d", [rnd(1, 2, 6, 5), (2, 3)], {"divisor_override": 5}, grad=True)
fn_case("avg_pool1d grad", "avg_pool1d", [rnd(2, 2, 9), 4], {"stride": 3, "padding": 2}, grad=True)
fn_case("adaptive_avg_pool2d grad", "adaptive_avg_pool2d", [rnd(2, 3, 7, 5), (3, 4)], grad=True)
fn_case("adaptive_avg_pool1d grad", "adaptive_avg_pool1d", [rnd(2, 11), 4], grad=True)
fn_case("adaptive_max_pool2d indices grad", "adaptive_max_pool2d", [rnd(2, 2, 5, 7), (3, 2)], {"return_indices": True}, grad=True)
fn_case("adaptive_max_pool1d indices", "adaptive_max_pool1d", [rnd(2, 3, 9), 4], {"return_indices": True})
fn_case("max_pool2d float32", "max_pool2d", [rnd(2, 2, 6, 6, dtype=torch.float32), 2])

# ---- resampling ------------------------------------------------------------------
for mode, dims, extra in (("nearest", 2, {}), ("bilinear", 2, {"align_corners": False}),
                          ("bilinear", 2, {"align_corners": True}), ("linear", 1, {"align_corners": False}),
                          ("linear", 1, {"align_corners": True}), ("nearest", 1, {})):
    shape = (2, 2, 3, 4) if dims == 2 else (2, 2, 5)
    for spec in ({"size": (5, 7) if dims == 2 else 8}, {"scale_factor": 1.7}, {"scale_factor": 0.6}):
        o = dict(spec, mode=mode, **extra)
        fn_case("interpolate %s %s %s" % (mode, extra, spec), "interpolate", [rnd(*shape)], o, grad=True)
fn_case("interpolate recompute_scale_factor", "interpolate", [rnd(1, 1, 4, 4)],
        {"scale_factor": 1.7, "mode": "bilinear", "recompute_scale_factor": True, "align_corners": False})
fn_case("interpolate nearest float32 x3", "interpolate", [rnd(1, 2, 3, 3, dtype=torch.float32)], {"scale_factor": 3})
fn_case("pixel_shuffle 5-D grad", "pixel_shuffle", [rnd(2, 2, 8, 2, 3), 2], grad=True)
fn_case("pixel_unshuffle grad", "pixel_unshuffle", [rnd(2, 3, 4, 6), 2], grad=True)
fn_case("unfold grad", "unfold", [rnd(2, 3, 5, 6), (2, 3)], {"dilation": (1, 2), "padding": 1, "stride": (2, 1)}, grad=True)
fn_case("fold grad", "fold", [rnd(2, 12, 9), (4, 5), (2, 2)], {"padding": 1, "stride": (2, 2)}, grad=True)

# ---- embedding_bag (1-based indices and offsets on the Lua side) -------------------
w = rnd(6, 3)
idx2 = torch.tensor([[0, 2, 2], [5, 1, 0]])
for mode in ("sum", "mean", "max"):
    fn_case("embedding_bag 2-D %s grad" % mode, "embedding_bag", [idx2, w], {"mode": mode}, lua_args=[idx2 + 1, w], grad=True)
idx1 = torch.tensor([1, 3, 3, 0, 5, 2, 4])
offs = torch.tensor([0, 2, 2, 5])
for mode in ("sum", "mean", "max"):
    fn_case("embedding_bag offsets with an empty bag %s" % mode, "embedding_bag", [idx1, w],
            {"offsets": offs, "mode": mode}, lua_args=[idx1 + 1, w], grad=mode != "max")
psw = rnd(7)
fn_case("embedding_bag per_sample_weights", "embedding_bag", [idx1, w],
        {"offsets": offs, "mode": "sum", "per_sample_weights": psw}, lua_args=[idx1 + 1, w])
fn_case("embedding_bag include_last_offset", "embedding_bag", [idx1, w],
        {"offsets": torch.tensor([0, 3, 7]), "mode": "mean", "include_last_offset": True}, lua_args=[idx1 + 1, w])


# ---- errors --------------------------------------------------------------------
def err_case(name, fn, targs, opts=None):
    fn_case(name, fn, targs, opts)
    assert "error" in cases[-1], name


err_case("conv2d channels", "conv2d", [rnd(1, 3, 6, 6), rnd(4, 2, 3, 3)], {"groups": 2})
err_case("conv2d groups", "conv2d", [rnd(1, 4, 6, 6), rnd(3, 2, 3, 3)], {"groups": 2})
err_case("conv2d kernel too large", "conv2d", [rnd(1, 4, 2, 2), rnd(3, 4, 3, 3)])
err_case("conv2d kernel too large dilated", "conv2d", [rnd(1, 4, 5, 5), rnd(3, 4, 3, 3)], {"dilation": 3, "padding": 0})
err_case("conv2d bias size", "conv2d", [rnd(1, 4, 6, 6), rnd(3, 4, 3, 3), rnd(2)])
err_case("conv2d dims", "conv2d", [rnd(6, 6), rnd(3, 4, 3, 3)])
err_case("conv2d dtypes", "conv2d", [rnd(1, 4, 6, 6, dtype=torch.float32), rnd(3, 4, 3, 3)])
err_case("conv2d stride 0", "conv2d", [rnd(1, 4, 6, 6), rnd(3, 4, 3, 3)], {"stride": 0})
err_case("conv2d negative padding", "conv2d", [rnd(1, 4, 6, 6), rnd(3, 4, 3, 3)], {"padding": -1})
err_case("conv2d same strided", "conv2d", [rnd(1, 4, 6, 6), rnd(3, 4, 3, 3)], {"padding": "same", "stride": 2})
err_case("conv2d bad padding string", "conv2d", [rnd(1, 4, 6, 6), rnd(3, 4, 3, 3)], {"padding": "foo"})
err_case("conv2d dilation 0", "conv2d", [rnd(1, 4, 6, 6), rnd(3, 4, 3, 3)], {"dilation": 0})
err_case("conv2d groups 0", "conv2d", [rnd(1, 4, 6, 6), rnd(3, 4, 3, 3)], {"groups": 0})
err_case("conv2d stride list", "conv2d", [rnd(1, 4, 6, 6), rnd(3, 4, 3, 3)], {"stride": (1, 1, 1)})
err_case("conv1d stride list", "conv1d", [rnd(1, 4, 6), rnd(3, 4, 3)], {"stride": (1, 1)})
err_case("conv_transpose1d channels", "conv_transpose1d", [rnd(1, 2, 5), rnd(1, 1, 3)])
err_case("conv_transpose2d output too small", "conv_transpose2d", [rnd(1, 4, 4, 3), rnd(4, 2, 1, 3)],
         {"padding": (2, 0), "groups": 2, "stride": (1, 2)})
err_case("conv_transpose2d output_padding", "conv_transpose2d", [rnd(1, 4, 4, 3), rnd(4, 2, 1, 3)], {"output_padding": 1})
err_case("max_pool2d output too small", "max_pool2d", [rnd(1, 1, 4, 4), 5])
err_case("max_pool2d pad too large", "max_pool2d", [rnd(1, 1, 4, 4), 2], {"padding": 2})
err_case("max_pool2d long", "max_pool2d", [torch.ones(1, 1, 4, 4, dtype=torch.int64), 2])
err_case("max_pool2d dims", "max_pool2d", [rnd(4, 4), 2])
err_case("max_pool2d stride 0", "max_pool2d", [rnd(1, 1, 4, 4), 2], {"stride": 0})
err_case("avg_pool2d divisor 0", "avg_pool2d", [rnd(1, 1, 4, 4), 2], {"divisor_override": 0})
fn_case("avg_pool2d int64 truncates", "avg_pool2d", [torch.randint(-9, 10, (1, 2, 5, 5)), 2], {"padding": 1})
err_case("adaptive_avg_pool2d long", "adaptive_avg_pool2d", [torch.ones(1, 1, 4, 4, dtype=torch.int64), 2])
err_case("adaptive_max_pool2d long", "adaptive_max_pool2d", [torch.ones(1, 1, 4, 4, dtype=torch.int64), 2])
err_case("adaptive_avg_pool2d dims", "adaptive_avg_pool2d", [rnd(4), 2])
err_case("interpolate linear on 4-D", "interpolate", [rnd(1, 1, 4, 4)], {"size": 3, "mode": "linear"})
err_case("interpolate align_corners with nearest", "interpolate", [rnd(1, 1, 4, 4)], {"size": 3, "align_corners": True})
err_case("interpolate size and scale", "interpolate", [rnd(1, 1, 4, 4)], {"size": 3, "scale_factor": 2})
err_case("interpolate neither", "interpolate", [rnd(1, 1, 4, 4)])
err_case("interpolate long", "interpolate", [torch.ones(1, 1, 4, 4, dtype=torch.int64)], {"size": 3})
err_case("pixel_shuffle channels", "pixel_shuffle", [rnd(1, 3, 4, 4), 2])
err_case("pixel_shuffle dims", "pixel_shuffle", [rnd(4, 4), 2])
err_case("pixel_unshuffle height", "pixel_unshuffle", [rnd(1, 1, 3, 4), 2])
err_case("embedding_bag mode", "embedding_bag", [torch.tensor([0, 1, 2]), rnd(4, 2)], {"offsets": torch.tensor([0, 2]), "mode": "foo"})
err_case("embedding_bag 2-D with offsets", "embedding_bag", [torch.tensor([[0, 1]]), rnd(4, 2)], {"offsets": torch.tensor([0])})
err_case("embedding_bag 1-D without offsets", "embedding_bag", [torch.tensor([0, 1, 2]), rnd(4, 2)])

# ---- modules: forward with given parameters, gradient of the weight ------------------
mod_cases = []


def mod_case(name, cls, ctor, kw, x, grad=True):
    torch.manual_seed(7)
    m = getattr(nn, cls)(*ctor, **kw).double()
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(rnd(*p.shape))
    y = m(x)
    c = {"name": name, "cls": cls, "ctor": [list(v) if isinstance(v, tuple) else v for v in ctor], "opts": lua_opts(kw), "input": tens(x),
         "params": {k: tens(v) for k, v in m.state_dict().items()}, "expect": tens(y.detach()),
         "repr": repr(m)}
    if grad:
        W = rnd(*y.shape)
        (y * W).sum().backward()
        c["W"] = tens(W)
        c["grads"] = {k: tens(p.grad) for k, p in m.named_parameters()}
    mod_cases.append(c)


mod_case("Conv2d reflect", "Conv2d", (2, 3, 3), {"padding": 2, "padding_mode": "reflect"}, rnd(2, 2, 5, 6))
mod_case("Conv2d replicate same", "Conv2d", (2, 3, (2, 3)), {"padding": "same", "padding_mode": "replicate", "bias": False}, rnd(1, 2, 4, 5))
mod_case("Conv2d circular stride", "Conv2d", (2, 4, 3), {"padding": (1, 2), "stride": 2, "padding_mode": "circular", "groups": 2}, rnd(1, 2, 5, 5))
mod_case("Conv1d circular", "Conv1d", (3, 2, 3), {"padding": 1, "padding_mode": "circular"}, rnd(2, 3, 6))
mod_case("Conv1d dilation", "Conv1d", (3, 2, 3), {"dilation": 2, "stride": 2}, rnd(2, 3, 9))
mod_case("ConvTranspose2d", "ConvTranspose2d", (2, 4, 3), {"stride": 2, "padding": 1, "output_padding": 1}, rnd(2, 2, 3, 3))
mod_case("ConvTranspose1d groups", "ConvTranspose1d", (4, 2, 3), {"groups": 2, "dilation": 2}, rnd(1, 4, 5))
mod_case("MaxPool2d", "MaxPool2d", (3,), {"stride": 2, "padding": 1}, rnd(1, 2, 6, 6), grad=False)
mod_case("AvgPool2d", "AvgPool2d", (2,), {"ceil_mode": True}, rnd(1, 2, 5, 5), grad=False)
mod_case("AdaptiveAvgPool2d", "AdaptiveAvgPool2d", ((2, 3),), {}, rnd(1, 2, 5, 5), grad=False)
mod_case("Upsample bilinear", "Upsample", (), {"scale_factor": 2, "mode": "bilinear", "align_corners": False}, rnd(1, 1, 3, 3), grad=False)
mod_case("PixelShuffle", "PixelShuffle", (2,), {}, rnd(1, 4, 2, 2), grad=False)

# ---- added later (appended, so that the values above keep their random draws) ----
torch.manual_seed(4321)
# embedding_bag: padding_idx (entries skipped; an all-padding bag is zeros), max_norm (rows renormalised)
w = rnd(6, 3)
idx2 = torch.tensor([[0, 2, 2], [2, 2, 2], [5, 1, 2]])
for mode in ("sum", "mean", "max"):
    fn_case("embedding_bag 2-D padding_idx %s grad" % mode, "embedding_bag", [idx2, w], {"mode": mode, "padding_idx": 2},
            lua_args=[idx2 + 1, w], grad=True)
idx1 = torch.tensor([1, 3, 3, 0, 5, 3, 4])
offs = torch.tensor([0, 2, 3, 5])
for mode in ("sum", "mean", "max"):
    fn_case("embedding_bag offsets padding_idx -3 %s grad" % mode, "embedding_bag", [idx1, w],
            {"offsets": offs, "mode": mode, "padding_idx": -3}, lua_args=[idx1 + 1, w], grad=True)
fn_case("embedding_bag per_sample_weights padding_idx", "embedding_bag", [idx1, w],
        {"offsets": offs, "mode": "sum", "per_sample_weights": rnd(7), "padding_idx": 3}, lua_args=[idx1 + 1, w])
wl = rnd(6, 3) * 3
fn_case("embedding_bag max_norm", "embedding_bag", [idx2, wl.clone()], {"mode": "mean", "max_norm": 1.5},
        lua_args=[idx2 + 1, wl.clone()])
fn_case("embedding_bag max_norm norm_type 1", "embedding_bag", [idx1, wl.clone()],
        {"offsets": offs, "mode": "sum", "max_norm": 2.0, "norm_type": 1.0}, lua_args=[idx1 + 1, wl.clone()])
# the weight after max_norm: rows looked up are scaled in place
wr = wl.clone()
F.embedding_bag(idx2, wr, max_norm=1.5)
cases.append({"name": "embedding_bag max_norm renormalises the weight in place", "fn": "embedding_bag_renorm",
              "args": [tens(idx2 + 1), tens(wl)], "opts": {"max_norm": 1.5}, "expect": [tens(wr)]})
fn_case("embedding_bag padding_idx out of range", "embedding_bag", [torch.tensor([[0, 1]]), rnd(5, 3)], {"padding_idx": 7},
        lua_args=[torch.tensor([[1, 2]]), rnd(5, 3)])
# PyTorch says "-5 through 4, but got 7": the range is 1-based on the Lua side
assert "error" in cases[-1]
cases[-1]["error"] = "padding_idx must be within the number of embeddings, -5 through 5 (1-based, not 0), but got 8"

# interpolate: bicubic (align_corners both ways, size and scale_factor) and area
for extra in ({"align_corners": False}, {"align_corners": True}):
    for spec in ({"size": (5, 7)}, {"scale_factor": 1.7}, {"scale_factor": 0.6}, {"size": (2, 9)}):
        o = dict(spec, mode="bicubic", **extra)
        fn_case("interpolate bicubic %s %s" % (extra, spec), "interpolate", [rnd(2, 2, 4, 5)], o, grad=True)
fn_case("interpolate bicubic float32", "interpolate", [rnd(1, 2, 3, 4, dtype=torch.float32)], {"scale_factor": 2, "mode": "bicubic"})
fn_case("interpolate bicubic 1x1 input", "interpolate", [rnd(1, 1, 1, 1)], {"size": (3, 2), "mode": "bicubic"}, grad=True)
fn_case("interpolate bicubic empty batch", "interpolate", [rnd(0, 2, 4, 4)], {"size": 3, "mode": "bicubic"})
for spec in ({"size": (3, 2)}, {"scale_factor": 0.5}, {"size": (7, 9)}):
    fn_case("interpolate area 2-D %s" % spec, "interpolate", [rnd(2, 2, 6, 5)], dict(spec, mode="area"), grad=True)
fn_case("interpolate area 1-D", "interpolate", [rnd(2, 3, 7)], {"size": 3, "mode": "area"}, grad=True)
fn_case("interpolate area 1-D scale", "interpolate", [rnd(1, 2, 4)], {"scale_factor": 1.5, "mode": "area"}, grad=True)
err_case("interpolate bicubic on 3-D", "interpolate", [rnd(1, 1, 4)], {"size": 3, "mode": "bicubic"})
err_case("interpolate area align_corners", "interpolate", [rnd(1, 1, 4, 4)], {"size": 3, "mode": "area", "align_corners": True})
err_case("interpolate bicubic long", "interpolate", [torch.ones(1, 1, 4, 4, dtype=torch.int64)], {"size": 3, "mode": "bicubic"})
err_case("interpolate area long", "interpolate", [torch.ones(1, 1, 4, 4, dtype=torch.int64)], {"size": 3, "mode": "area"})

# ---- interpolate: nearest-exact (3-D, 4-D, 5-D), trilinear, nearest and area on 5-D --------
torch.manual_seed(2468)   # (a seed of their own: the cases above keep their values)
for shape, spec in (((2, 2, 5), {"size": 3}), ((1, 2, 4), {"scale_factor": 2.5}), ((1, 1, 10), {"scale_factor": 0.35}),
                    ((1, 1, 10), {"scale_factor": 0.35, "recompute_scale_factor": True}),
                    ((2, 2, 3, 5), {"size": (4, 2)}), ((1, 2, 4, 4), {"scale_factor": 1.5}),
                    ((1, 1, 5, 3), {"scale_factor": (0.6, 2.0)}),
                    ((2, 1, 2, 3, 4), {"size": (3, 5, 2)}), ((1, 2, 3, 2, 3), {"scale_factor": 1.7})):
    fn_case("interpolate nearest-exact %s %s" % (shape, spec), "interpolate", [rnd(*shape)],
            dict(spec, mode="nearest-exact"), grad=True)
fn_case("interpolate nearest-exact float32", "interpolate", [rnd(2, 3, 3, 4, dtype=torch.float32)],
        {"scale_factor": 1.5, "mode": "nearest-exact"})
for align in (False, True):
    for spec in ({"size": (3, 5, 2)}, {"scale_factor": 2.0}, {"scale_factor": (0.6, 1.5, 2.0)},
                 {"scale_factor": 1.5, "recompute_scale_factor": True}, {"size": (2, 3, 4)}):
        fn_case("interpolate trilinear align_corners=%s %s" % (align, spec), "interpolate", [rnd(2, 2, 2, 3, 4)],
                dict(spec, mode="trilinear", align_corners=align), grad=True)
fn_case("interpolate trilinear float32", "interpolate", [rnd(1, 2, 3, 3, 3, dtype=torch.float32)],
        {"scale_factor": 2, "mode": "trilinear"})
fn_case("interpolate trilinear default align", "interpolate", [rnd(1, 1, 1, 2, 2)], {"size": (3, 3, 3), "mode": "trilinear"},
        grad=True)
fn_case("interpolate trilinear empty batch", "interpolate", [rnd(0, 2, 2, 2, 2)], {"size": 3, "mode": "trilinear"})
fn_case("interpolate trilinear inf", "interpolate", [torch.tensor([[[[[1.0, math.inf, 2.0]]]]])],
        {"scale_factor": 2, "mode": "trilinear"})
fn_case("interpolate linear inf", "interpolate", [torch.tensor([[[1.0, math.inf, 2.0]]])], {"scale_factor": 2, "mode": "linear"})
fn_case("interpolate nearest inf", "interpolate", [torch.tensor([[[1.0, math.inf, 2.0]]])], {"scale_factor": 2})
fn_case("interpolate bilinear inf", "interpolate", [torch.tensor([[[[1.0, math.inf, 2.0]]]])],
        {"scale_factor": 2, "mode": "bilinear"})
for spec in ({"size": (3, 2, 5)}, {"scale_factor": 2}, {"scale_factor": 0.5}):
    fn_case("interpolate nearest 5-D %s" % spec, "interpolate", [rnd(2, 2, 3, 4, 2)], dict(spec, mode="nearest"), grad=True)
fn_case("interpolate area 5-D", "interpolate", [rnd(2, 2, 5, 4, 3)], {"size": (2, 3, 2), "mode": "area"}, grad=True)
fn_case("interpolate area 5-D scale", "interpolate", [rnd(1, 2, 4, 4, 4)], {"scale_factor": 0.5, "mode": "area"}, grad=True)
u8 = torch.randint(0, 256, (1, 2, 3, 3), dtype=torch.uint8)
fn_case("interpolate nearest uint8", "interpolate", [u8], {"scale_factor": 2})
fn_case("interpolate nearest-exact uint8 5-D", "interpolate", [torch.randint(0, 256, (1, 2, 2, 2, 3), dtype=torch.uint8)],
        {"size": (3, 3, 4), "mode": "nearest-exact"})
bf = rnd(1, 2, 2, 3, 3).to(torch.bfloat16)
fn_case("interpolate nearest bfloat16", "interpolate", [bf], {"scale_factor": 2})
fn_case("interpolate trilinear bfloat16", "interpolate", [bf], {"size": (2, 4, 4), "mode": "trilinear"})
fn_case("interpolate bilinear bfloat16", "interpolate", [rnd(1, 2, 3, 3).to(torch.bfloat16)], {"size": 4, "mode": "bilinear"})
err_case("interpolate nearest-exact bfloat16", "interpolate", [bf], {"scale_factor": 2, "mode": "nearest-exact"})
err_case("interpolate trilinear uint8", "interpolate", [torch.zeros(1, 2, 2, 2, 2, dtype=torch.uint8)],
         {"scale_factor": 2, "mode": "trilinear"})
err_case("interpolate trilinear long channels_last", "interpolate", [torch.zeros(1, 1, 2, 2, 2, dtype=torch.int64)],
         {"scale_factor": 2, "mode": "trilinear"})
err_case("interpolate nearest-exact int32", "interpolate", [torch.zeros(1, 2, 2, 2, dtype=torch.int32)],
         {"scale_factor": 2, "mode": "nearest-exact"})
err_case("interpolate nearest-exact half", "interpolate", [torch.zeros(1, 2, 4, dtype=torch.float16)],
         {"scale_factor": 2, "mode": "nearest-exact"})
err_case("interpolate area 5-D long", "interpolate", [torch.zeros(1, 2, 2, 2, 2, dtype=torch.int64)],
         {"size": 1, "mode": "area"})
err_case("interpolate trilinear on 4-D", "interpolate", [rnd(1, 1, 4, 4)], {"size": 3, "mode": "trilinear"})
err_case("interpolate trilinear on 3-D", "interpolate", [rnd(1, 1, 4)], {"size": 3, "mode": "trilinear"})
err_case("interpolate bilinear on 5-D", "interpolate", [rnd(1, 1, 2, 2, 2)], {"size": 3, "mode": "bilinear"})
err_case("interpolate linear on 5-D", "interpolate", [rnd(1, 1, 2, 2, 2)], {"size": 3, "mode": "linear"})
err_case("interpolate bicubic on 5-D", "interpolate", [rnd(1, 1, 2, 2, 2)], {"size": 3, "mode": "bicubic"})
err_case("interpolate nearest-exact align_corners", "interpolate", [rnd(1, 1, 4)],
         {"size": 3, "mode": "nearest-exact", "align_corners": False})
err_case("interpolate recompute with size", "interpolate", [rnd(1, 1, 4)],
         {"size": 3, "mode": "nearest-exact", "recompute_scale_factor": True})
err_case("interpolate trilinear zero channels", "interpolate", [rnd(1, 0, 2, 2, 2)], {"size": 3, "mode": "trilinear"})
err_case("interpolate nearest-exact zero channels 4-D", "interpolate", [rnd(2, 0, 2, 2)], {"size": 3, "mode": "nearest-exact"})
err_case("interpolate trilinear output 0", "interpolate", [rnd(1, 1, 2, 3, 4)], {"scale_factor": 0.4, "mode": "trilinear"})
err_case("interpolate nearest-exact output 0 1-D", "interpolate", [rnd(1, 1, 3)], {"scale_factor": 0.1, "mode": "nearest-exact"})
err_case("interpolate nearest output 0 2-D", "interpolate", [rnd(1, 1, 3, 4)], {"size": (0, 2)})
err_case("interpolate trilinear scale_factor length", "interpolate", [rnd(1, 1, 2, 3, 4)],
         {"scale_factor": [2, 2], "mode": "trilinear"})
err_case("interpolate trilinear size length", "interpolate", [rnd(1, 1, 2, 3, 4)], {"size": [2, 2], "mode": "trilinear"})
err_case("interpolate unknown mode 5-D", "interpolate", [rnd(1, 1, 2, 3, 4)], {"size": 2, "mode": "bogus"})
err_case("interpolate nearest-exact 6-D", "interpolate", [rnd(1, 1, 1, 2, 2, 2)], {"size": 2, "mode": "nearest-exact"})
fn_case("interpolate area 5-D output 0", "interpolate", [rnd(1, 1, 3, 4, 4)], {"scale_factor": 0.1, "mode": "area"})

mod_case("EmbeddingBag padding_idx max", "EmbeddingBag", (6, 3), {"mode": "max", "padding_idx": 1},
         torch.tensor([[0, 1, 3], [1, 1, 1]]))
mod_cases[-1]["input"] = tens(torch.tensor([[0, 1, 3], [1, 1, 1]]) + 1)       # 1-based on the Lua side
mod_cases[-1]["repr"] = mod_cases[-1]["repr"].replace("padding_idx=1", "padding_idx=2")
mod_case("Upsample bicubic align_corners", "Upsample", (), {"size": (5, 4), "mode": "bicubic", "align_corners": True},
         rnd(1, 2, 3, 3), grad=False)

with open("spec/fixtures/conv.lua", "w") as f:
    f.write("-- generated by tools/gen_conv_fixtures.py from PyTorch %s; do not edit\n" % torch.__version__)
    f.write("-- indices are 1-based (PyTorch's + 1)\n")
    f.write("return {\n  functional = {\n")
    for c in cases:
        f.write("    " + lua(c) + ",\n")
    f.write("  },\n  modules = {\n")
    for c in mod_cases:
        f.write("    " + lua(c) + ",\n")
    f.write("  },\n}\n")
print(len(cases), "functional cases,", len(mod_cases), "module cases")
