"""zshard_export: a PyTorch nn.Module, its loss and a torch.optim.AdamW
configuration -> one training step in the form of docs/contract.md.

    from zshard_export import export_step
    result = export_step(model, optimizer, {"idx": tokens, "targets": targets})
    result.write("step.mlir", "weights.safetensors", "step.json")

See docs/zshard-export.md.
"""

from .errors import ExportError
from .export import ExportResult, export_step

__all__ = ["ExportError", "ExportResult", "export_step"]
