"""The exporter's one error type."""


class ExportError(Exception):
    """A model, loss or optimizer the exporter cannot turn into a contract step.

    The message says what and where (the aten op and the module path, the
    parameter or buffer name), so the user can change the model.
    """
