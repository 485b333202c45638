#!/usr/bin/python3
"""tools/gen_conv_paths_fixtures.py -> spec/fixtures/conv_paths.lua

Expected values for spec/conv_paths_spec.lua from PyTorch 1.13: one case per
convolution path of src/lt_conv*.c (tiled gemms over 262144 multiply-adds,
strided and 1x1 convolutions, the depthwise kernel, groups, the transposed
weight gradient, batch-1 splits).  Inputs are not stored: both sides build
them from the same integer formula (val below), so a case with 128 channels
costs a few lines.  Stored per case: samples of the output and of the
gradients of loss = sum(out * R) (R from the formula too), and the dot
products sum(out * R2), sum(gx * R2), sum(gw * R2) with their magnitudes
sum(|. * R2|) for the tolerance.

    /usr/bin/python3 tools/gen_conv_paths_fixtures.py     (from the checkout root)
"""
import torch
import torch.nn.functional as F

# (name, N, Cin, Cout, H, W, k, stride, padding, groups, bias)
CASES = [
    ("3x3 64->64 8x8, tiled gemms, transposed weight gradient", 2, 64, 64, 8, 8, 3, 1, 1, 1, True),
    ("3x3 stride 2 64->128 8x8", 2, 64, 128, 8, 8, 3, 2, 1, 1, False),
    ("1x1 128->64 6x6 (the input is the matrix)", 2, 128, 64, 6, 6, 1, 1, 0, 1, True),
    ("1x1 stride 2 64->128 6x6", 2, 64, 128, 6, 6, 1, 2, 0, 1, False),
    ("depthwise 3x3 64ch 6x6", 2, 64, 64, 6, 6, 3, 1, 1, 64, True),
    ("depthwise 3x3 stride 2 64ch 7x7", 2, 64, 64, 7, 7, 3, 2, 1, 64, False),
    ("depthwise 3x3 stride 2 padding 0 16ch 9x8", 2, 16, 16, 9, 8, 3, 2, 0, 16, True),
    ("depthwise 5x5 multiplier 2 32->64 6x6", 2, 32, 64, 6, 6, 5, 1, 2, 32, True),
    ("depthwise 3x3 wide rows 8ch 3x1100", 1, 8, 8, 3, 1100, 3, 1, 1, 8, False),
    ("grouped 3x3 groups 4 64->64 6x6", 2, 64, 64, 6, 6, 3, 1, 1, 4, True),
    ("batch 1 128->128 6x6 (channel slices)", 1, 128, 128, 6, 6, 3, 1, 1, 1, True),
    ("batch 1 64->64 24x24 (row blocks and channel slices)", 1, 64, 64, 24, 24, 3, 1, 1, 1, False),
    ("3x3 64->32 on 3x3 grids, batch 20 (images share products)", 20, 64, 32, 3, 3, 3, 1, 1, 1, True),
    ("3x3 stride 2 32->64 5x5, batch 5 (images share products)", 5, 32, 64, 5, 5, 3, 2, 1, 1, False),
    ("grouped 3x3 groups 2 on 4x4 grids, batch 3", 3, 16, 16, 4, 4, 3, 1, 1, 2, True),
    ("3x3 64->64 12x12, batch 3 (weight gradient split by input channels at 2 threads)", 3, 64, 64, 12, 12, 3, 1, 1, 1, False),
    ("3x3 128->64 7x7, batch 5 (transposed weight gradient of images sharing products, split by input channels)", 5, 128, 64, 7, 7, 3, 1, 1, 1, True),
    ("3x3 64->64 7x7, batch 4 (transposed weight gradient of images sharing products, split by samples)", 4, 64, 64, 7, 7, 3, 1, 1, 1, False),
    ("3x3 128->128 4x4, batch 8 (one image group: input gradient split by big channels at 2 threads)", 8, 128, 128, 4, 4, 3, 1, 1, 1, True),
    ("1x1 stride 2 128->256 7x7, batch 8 (input gradient split by big channels)", 8, 128, 256, 7, 7, 1, 2, 0, 1, False),
]


def val(n, seed, dtype):
    i = torch.arange(n, dtype=torch.int64)
    v = ((i * 7919 + seed * 104729) % 2001 - 1000).to(torch.float64) / 1000
    return v.to(dtype)


def lua(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, str)):
        return repr(v) if isinstance(v, int) else '"' + v + '"'
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "{" + ",".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ",".join("%s=%s" % (k, lua(x)) for k, x in v.items()) + "}"
    raise TypeError(type(v))


def samples(t):
    flat = t.detach().reshape(-1).to(torch.float64)
    n = flat.numel()
    step = max(1, n // 24)
    idx = list(range(0, n, step)) + [n - 1]
    return {"idx": [i + 1 for i in idx], "val": [flat[i].item() for i in idx]}


def dot(t, seed):
    flat = t.detach().reshape(-1).to(torch.float64)
    r = val(flat.numel(), seed, torch.float64)
    return [(flat * r).sum().item(), (flat * r).abs().sum().item()]


def main():
    out = []
    for name, N, ci, co, H, W, k, s, p, g, has_b in CASES:
        for dt in (torch.float32, torch.float64):
            x = val(N * ci * H * W, 1, dt).reshape(N, ci, H, W).requires_grad_(True)
            w = (val(co * (ci // g) * k * k, 2, dt) * 0.1).reshape(co, ci // g, k, k).requires_grad_(True)
            b = val(co, 3, dt).requires_grad_(True) if has_b else None
            y = F.conv2d(x, w, b, stride=s, padding=p, groups=g)
            r = val(y.numel(), 4, dt).reshape(y.shape)
            (y * r).sum().backward()
            case = dict(name=name, dtype=str(dt).replace("torch.", ""), N=N, ci=ci, co=co, H=H, W=W, k=k, s=s, p=p, g=g,
                        bias=has_b, shape=list(y.shape), out=samples(y), out_dot=dot(y, 5), gx=samples(x.grad),
                        gx_dot=dot(x.grad, 6), gw=samples(w.grad), gw_dot=dot(w.grad, 7))
            if has_b:
                case["gb"] = samples(b.grad)
            out.append(case)
    with open("spec/fixtures/conv_paths.lua", "w") as f:
        f.write("-- generated by tools/gen_conv_paths_fixtures.py (PyTorch %s); do not edit\n" % torch.__version__)
        f.write("return {\n")
        for c in out:
            f.write("  " + lua(c) + ",\n")
        f.write("}\n")


main()
