-- ltensor.optim: placeholder until this module lands.
return {}
