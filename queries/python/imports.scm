; Imports of torch, einops and their submodules. `imports_torch` uses these
; matches to skip files that cannot hold tensors; the module name is matched
; with the space-tolerant form that `torch . nn` would need.

; import torch / import torch.nn.functional / import einops
(import_statement
  name: (dotted_name) @import.module
  (#match? @import.module "^(torch|einops)[[:space:]]*(\\.|$)"))

; import torch.nn as nn
(import_statement
  name: (aliased_import
    name: (dotted_name) @import.module
    alias: (identifier) @import.alias)
  (#match? @import.module "^(torch|einops)[[:space:]]*(\\.|$)"))

; from torch import nn / from torch.nn import functional as F
(import_from_statement
  module_name: (dotted_name) @import.module
  (#match? @import.module "^(torch|einops)[[:space:]]*(\\.|$)"))
