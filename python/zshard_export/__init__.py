"""zshard_export: a PyTorch nn.Module, its loss and a torch.optim.AdamW
configuration -> one training step in the form of docs/contract.md.

    from zshard_export import export_step
    result = export_step(model, optimizer, {"idx": tokens, "targets": targets})
    result.write("step.mlir", "weights.safetensors", "step.json")

See docs/zshard-export.md.
"""

from .errors import ExportError

__all__ = ["ExportError", "ExportResult", "export_step"]


def __getattr__(name):
    # torch is imported on first use, so the command line can report a
    # missing or broken torch in one line.
    if name in ("ExportResult", "export_step"):
        from . import export
        return getattr(export, name)
    raise AttributeError(f"module 'zshard_export' has no attribute '{name}'")
