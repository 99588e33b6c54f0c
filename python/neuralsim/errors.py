"""The exceptions of neuralsim. Their messages are the command-line tools'
(file, line and key, expected against actual)."""


class Error(Exception):
    """Base class of every error neuralsim raises for its inputs or results."""


class ConfigError(Error, ValueError):
    """A bad config, option or name (the tools' exit code 2)."""


class ModelError(Error, ValueError):
    """A model that cannot be built or is not physical (exit code 2)."""


class DataError(Error, ValueError):
    """Missing, mis-shaped or non-finite data (exit code 3)."""


class NumericalError(Error, RuntimeError):
    """A simulation that diverged or a loss that is not finite (exit code 4)."""


class InvalidArgumentError(Error, ValueError):
    """An argument the library's own checks refused."""


class UnknownParameterError(ConfigError, KeyError):
    """A parameter name the model does not have (a KeyError, as for a dict)."""

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
