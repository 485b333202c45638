-- Reference entries: ONNX import (T.onnx).
return {
  { "T.onnx.load", "T.onnx.load(path_or_bytes [, {requires_grad = true, base_dir = dir}])",
    "Loads an ONNX model (opsets 11-17 as torch.onnx.export writes them: CNNs, MLPs, transformers, LSTM/GRU, with dynamic axes) " ..
    "as an nn.Module that runs the graph with ltensor's ops, so autograd runs through it. Call it as m(x), m(x1, x2, ...) or " ..
    "m{name = x}; one output comes back as a tensor, several in graph order. m.input_names, m.output_names, and m.inputs / " ..
    "m.outputs ({name=, dtype=, shape=} with symbolic dims as strings, e.g. {\"batch\", 3, 224, 224}). Floating initializers " ..
    "are Parameters (requires_grad unless {requires_grad = false}), BatchNormalization statistics and integer initializers are " ..
    "buffers; m:state_dict() is keyed by the initializer names; m:to(T.float64) works. A string starting with byte 8 or holding " ..
    "a NUL byte is the model's bytes, any other a path; external data files are found beside the model (or in base_dir). " ..
    "Axes inside the file stay ONNX's (0-based); integer tensors the graph computes (Shape, ArgMax, Gather indices) hold " ..
    "0-based values. A malformed file, an unsupported operator or attribute is an error at load time: " ..
    "`ltensor.onnx.load: node 'Conv_3' (op Conv, opset 13): ...`; errors while running name the node too " ..
    "(`ltensor.onnx.forward: node ...`). T.onnx.operators lists the supported op_types.",
    "local m = T.onnx.load(\"spec/fixtures/onnx/mlp.onnx\")   -- exported from PyTorch, dynamic batch\n" ..
    "print(m.inputs[1].shape)                               -- {\"batch\", 6}\n" ..
    "local y = m(T.randn(4, 6))                             -- log-probabilities, 4 x 3\n" ..
    "y:sum():backward()                                     -- gradients reach m:parameters()" },
}
