"""NeuralSim from Python: differentiable rigid-body simulation, system
identification and neural augmentation (docs/python.md).

    import neuralsim
    model = neuralsim.load_model("configs/models/double_pendulum.yaml")
    sim = neuralsim.Simulator(model, dt=0.01, integrator="rk4")
    Q, QD = sim.rollout(q0, qd0, controls)          # numpy arrays, T x nq, T x nv
    g = sim.rollout_vjp(q0, qd0, controls, dQ, dQD, parameters=["link.link1.length"])
    result = neuralsim.identify("configs/simid_double_pendulum_lengths.yaml", seed=1)

Every tool of the command line is a function here (identify, rollout,
compare, train_augment, discover, distill_mpc, import_recordings) that returns the
library's typed result. Errors are the exceptions of neuralsim.errors, with
the tools' messages. Long calls release the GIL and stop on Ctrl-C
(KeyboardInterrupt). Log lines go to logging.getLogger("neuralsim").
"""
from . import errors
from ._neuralsim import (
    CompareResult,
    DiscoverResult,
    DistillResult,
    GradientCheckSummary,
    IdentificationResult,
    Model,
    Parameters,
    RolloutGradients,
    RolloutResult,
    Simulator,
    TrainAugmentResult,
    aba,
    check_identification_gradient,
    check_training_gradient,
    compare,
    crba,
    discover,
    distill_mpc,
    identify,
    import_recordings,
    jacobian,
    kinetic_energy,
    link_pose,
    load_model,
    potential_energy,
    rnea,
    rollout,
    train_augment,
)
from .errors import ConfigError, DataError, Error, ModelError, NumericalError, UnknownParameterError

__all__ = [
    "CompareResult", "ConfigError", "DataError", "DiscoverResult", "DistillResult", "Error", "GradientCheckSummary",
    "IdentificationResult", "Model",
    "ModelError", "NumericalError", "Parameters", "RolloutGradients", "RolloutResult", "Simulator",
    "TrainAugmentResult", "UnknownParameterError", "aba", "check_identification_gradient", "check_training_gradient",
    "compare", "crba", "discover", "distill_mpc", "errors", "identify",
    "import_recordings", "jacobian", "kinetic_energy", "link_pose", "load_model", "potential_energy", "rnea",
    "rollout", "train_augment",
]
