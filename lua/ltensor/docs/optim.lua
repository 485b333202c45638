-- Reference entries: SGD, Adam and AdamW (the other optimizers, the
-- schedulers and the data utilities are in docs/training.lua).
-- Format (lua/ltensor/help.lua): { name, signature, description, example }.
-- Every optimizer takes a list of tensors, a Module, or a list of parameter
-- groups ({params = {...}, lr = ...}) whose keys override the options;
-- opt:zero_grad([set_to_none=false]), opt:step([closure]), opt:add_param_group(g),
-- opt:state_dict() / opt:load_state_dict(sd) (training resumes exactly).
return {
  { "T.optim.SGD", "T.optim.SGD(params, {lr=, momentum=0, dampening=0, weight_decay=0, nesterov=false, maximize=false})", "Stochastic gradient descent with optional momentum (PyTorch's buffer form), dampening, Nesterov momentum and L2 weight decay. lr is required, as in PyTorch; unknown options raise with a suggestion. opt:zero_grad() clears gradients, opt:step() updates.", "local model = T.nn.Linear(3, 1)\nlocal opt = T.optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9})\nopt:zero_grad()\nmodel(T.randn(4, 3)):pow(2):mean():backward()\nopt:step()" },
  { "T.optim.Adam", "T.optim.Adam(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, amsgrad=false, maximize=false})", "Adam (Kingma and Ba): per-parameter step sizes from running averages of the gradient and its square, with bias correction; weight_decay is added to the gradient (L2); amsgrad keeps the maximum of the second moments.", "local model = T.nn.Linear(3, 1)\nlocal opt = T.optim.Adam(model:parameters(), {lr = 1e-3})" },
  { "T.optim.AdamW", "T.optim.AdamW(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=1e-2, amsgrad=false, maximize=false})", "Adam with decoupled weight decay (Loshchilov and Hutter): parameters shrink by lr * weight_decay each step, separately from the adaptive update.", "local model = T.nn.Linear(3, 1)\nlocal opt = T.optim.AdamW({{params = {model.weight}, weight_decay = 0.1}, {params = {model.bias}, weight_decay = 0}}, {lr = 3e-4})" },
  -- the methods every optimizer has: help("Optimizer:step"), help("SGD:step"), help(opt.step)
  { "T.optim.Optimizer:step", "opt:step([closure])",
    "Updates every parameter of every group from its .grad (parameters whose grad is nil are skipped), with the group's options, under no_grad. closure, a function that zeroes the gradients, computes the loss, calls backward and returns the loss, is called first (with grad enabled) and its result returned; T.optim.LBFGS requires it and may call it several times.",
    "local model = T.nn.Linear(3, 1)\nlocal opt = T.optim.SGD(model:parameters(), {lr = 0.1})\nlocal x, y = T.randn(8, 3), T.randn(8, 1)\nfor i = 1, 5 do\n  opt:zero_grad()\n  local loss = T.nn.functional.mse_loss(model(x), y)\n  loss:backward()\n  opt:step()\nend\n-- with a closure:\nlocal loss = opt:step(function()\n  opt:zero_grad()\n  local l = T.nn.functional.mse_loss(model(x), y)\n  l:backward()\n  return l\nend)" },
  { "T.optim.Optimizer:zero_grad", "opt:zero_grad([set_to_none=false | {set_to_none=}])",
    "Zeroes the .grad of every parameter the optimizer holds, in place (PyTorch 1.13's default); with set_to_none the gradients become nil instead (less memory; step skips them). Call it before each backward, as gradients accumulate.",
    "local w = T.randn(3, {requires_grad = true})\nlocal opt = T.optim.SGD({w}, {lr = 0.1})\nw:sum():backward()\nopt:zero_grad()          -- w.grad is 0 0 0\nopt:zero_grad(true)      -- w.grad is nil" },
  { "T.optim.Optimizer:state_dict", "opt:state_dict() -> {state =, param_groups =}",
    "The optimizer's state as PyTorch lays it out: state maps each parameter's position (1, 2, ... in the order of the groups) to its buffers (momentum, exp_avg, step, ...), param_groups lists each group's options with params as those positions. A copy: later steps do not change it. T.save writes it, alone or in a checkpoint table, and load_state_dict restores it so training resumes exactly.",
    "local model = T.nn.Linear(3, 1)\nlocal opt = T.optim.Adam(model:parameters())\nmodel(T.randn(4, 3)):sum():backward()\nopt:step()\nlocal sd = opt:state_dict()\nprint(sd.param_groups[1].lr, sd.state[1].step)\nlocal path = os.tmpname()\nT.save(path, {model = model:state_dict(), optimizer = sd, epoch = 1})\nos.remove(path)" },
  { "T.optim.Optimizer:load_state_dict", "opt:load_state_dict(state_dict)",
    "Restores a state from state_dict() (or from T.load of a saved one) into an optimizer built the same way over the same parameters: the same number of groups and of parameters in each. The buffers are copied to the parameters' dtypes.",
    "local model = T.nn.Linear(3, 1)\nlocal opt = T.optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9})\nmodel(T.randn(4, 3)):sum():backward()\nopt:step()\nlocal opt2 = T.optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9})\nopt2:load_state_dict(opt:state_dict())   -- opt2 continues where opt stopped" },
  { "T.optim.Optimizer:add_param_group", "opt:add_param_group({params = {...}, <option> = ...})",
    "Adds a parameter group (for example the layers of a model unfrozen during fine-tuning); options it does not give take the optimizer's defaults. A parameter may belong to one group only. The groups are opt.param_groups (a list of tables; set g.lr to change a group's learning rate by hand).",
    "local base, head = T.nn.Linear(4, 4), T.nn.Linear(4, 2)\nlocal opt = T.optim.SGD(head:parameters(), {lr = 0.1})\nopt:add_param_group({params = base:parameters(), lr = 0.01})\nprint(#opt.param_groups, opt.param_groups[2].lr)   -- 2  0.01" },
  -- the methods every scheduler has: help("LRScheduler:step"), help("StepLR:get_last_lr")
  { "T.optim.lr_scheduler.LRScheduler:step", "sched:step()   |   plateau:step(metric)",
    "Advances the schedule one epoch (or one batch for OneCycleLR) and writes the new learning rate into each parameter group of the optimizer; call it after opt:step(). ReduceLROnPlateau:step takes the metric it watches (a number or a one-element tensor). An epoch number as argument sets the epoch directly (deprecated in PyTorch).",
    "local opt = T.optim.SGD(T.nn.Linear(3, 1):parameters(), {lr = 0.1})\nlocal sched = T.optim.lr_scheduler.ExponentialLR(opt, 0.5)\nfor epoch = 1, 3 do\n  opt:step()     -- the epoch's training\n  sched:step()\nend\nprint(opt.param_groups[1].lr)   -- 0.0125" },
  { "T.optim.lr_scheduler.LRScheduler:get_last_lr", "sched:get_last_lr() -> {lr, ...}",
    "The learning rate of each parameter group after the last step (a new list, one number per group), as PyTorch's get_last_lr.",
    "local opt = T.optim.SGD(T.nn.Linear(3, 1):parameters(), {lr = 0.1})\nlocal sched = T.optim.lr_scheduler.StepLR(opt, 2, 0.5)\nfor epoch = 1, 4 do opt:step() sched:step() end\nprint(sched:get_last_lr()[1])   -- 0.025" },
  { "T.optim.lr_scheduler.LRScheduler:get_lr", "sched:get_lr() -> {lr, ...}",
    "The rule of a scheduler class: the learning rates of the current epoch computed from the previous ones (PyTorch's chainable form). step calls it; to read the rates use get_last_lr. A scheduler of your own defines it.",
    "local opt = T.optim.SGD(T.nn.Linear(3, 1):parameters(), {lr = 0.1})\nlocal sched = T.optim.lr_scheduler.StepLR(opt, 2)\nprint(sched:get_lr()[1])   -- 0.1" },
  { "T.optim.lr_scheduler.LRScheduler:state_dict", "sched:state_dict() -> table",
    "The scheduler's state (every field but the optimizer and functions: last_epoch, base_lrs, the options, ...), to save with the optimizer's and restore with load_state_dict.",
    "local opt = T.optim.SGD(T.nn.Linear(3, 1):parameters(), {lr = 0.1})\nlocal sched = T.optim.lr_scheduler.StepLR(opt, 30)\nlocal sd = sched:state_dict()\nprint(sd.last_epoch, sd.step_size)   -- 0  30" },
  { "T.optim.lr_scheduler.LRScheduler:load_state_dict", "sched:load_state_dict(state_dict)",
    "Restores a state from state_dict() (the schedule continues from its epoch); restore the optimizer's state too.",
    "local opt = T.optim.SGD(T.nn.Linear(3, 1):parameters(), {lr = 0.1})\nlocal sched = T.optim.lr_scheduler.StepLR(opt, 2)\nfor epoch = 1, 3 do opt:step() sched:step() end\nlocal sched2 = T.optim.lr_scheduler.StepLR(opt, 2)\nsched2:load_state_dict(sched:state_dict())\nprint(sched2.last_epoch)   -- 3" },
  { "T.optim.lr_scheduler.ReduceLROnPlateau:is_better", "plateau:is_better(a, best) -> boolean",
    "Whether metric a improves on best under the scheduler's mode, threshold and threshold_mode (what step uses to count bad epochs).",
    "local opt = T.optim.SGD(T.nn.Linear(3, 1):parameters(), {lr = 0.1})\nlocal plateau = T.optim.lr_scheduler.ReduceLROnPlateau(opt, {mode = \"min\", threshold = 0.1})\nprint(plateau:is_better(0.85, 1), plateau:is_better(0.95, 1))   -- true  false" },
}
