# Type stubs of the extension module (docstrings: help(neuralsim.<name>)).
import os
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
ArrayLike = Union[Array, Sequence[float]]
Config = Union[str, os.PathLike, Dict[str, Any]]
Overrides = Union[None, Mapping[str, Any], Sequence[str]]
Trajectories = Dict[str, Dict[str, Array]]

class Parameters:
    def __getitem__(self, name: str) -> float: ...
    def __setitem__(self, name: str, value: float) -> None: ...
    def __contains__(self, name: str) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def keys(self) -> List[str]: ...
    def items(self) -> List[Tuple[str, float]]: ...
    def bounds(self, name: str) -> Tuple[float, float]: ...
    def vector(self, names: Sequence[str]) -> Array: ...
    def set_vector(self, names: Sequence[str], values: ArrayLike) -> None: ...

class Model:
    name: str
    nq: int
    nv: int
    body_names: List[str]
    position_names: List[str]
    velocity_names: List[str]
    parameters: Parameters
    def copy(self) -> Model: ...

def load_model(path: Union[str, os.PathLike], floating_base: bool = False, merge_fixed_joints: bool = True) -> Model: ...
def aba(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike) -> Array: ...
def rnea(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> Array: ...
def crba(model: Model, q: ArrayLike) -> Array: ...
def kinetic_energy(model: Model, q: ArrayLike, qd: ArrayLike) -> float: ...
def potential_energy(model: Model, q: ArrayLike) -> float: ...
def link_pose(model: Model, q: ArrayLike, link: str) -> Tuple[Array, Array]: ...
def jacobian(model: Model, q: ArrayLike, link: str) -> Array: ...

class RolloutGradients:
    loss: float
    parameters: Dict[str, float]
    q0: Array
    qd0: Array
    controls: Array
    weights: Array

class Simulator:
    model: Model
    dt: float
    integrator: str
    weights: Array
    def __init__(self, model: Model, dt: float, integrator: str = "semi_implicit_euler", substeps: int = 1,
                 check_finite: bool = True, contact: Optional[Dict[str, Any]] = None,
                 augment: Optional[List[Dict[str, Any]]] = None) -> None: ...
    @staticmethod
    def from_config(config: Config, overrides: Sequence[str] = ..., weights: Optional[str] = None) -> Simulator: ...
    def step(self, q: ArrayLike, qd: ArrayLike, u: ArrayLike, t: float = 0.0) -> Tuple[Array, Array]: ...
    def rollout(self, q0: ArrayLike, qd0: ArrayLike, controls: Array) -> Tuple[Array, Array]: ...
    def rollout_vjp(self, q0: ArrayLike, qd0: ArrayLike, controls: Array, dQ: Array, dQD: Array,
                    parameters: Sequence[str] = ...) -> RolloutGradients: ...
    def value_and_grad(self, q0: ArrayLike, qd0: ArrayLike, controls: Array, target_q: Array,
                       target_qd: Optional[Array] = None, wq: float = 1.0, wqd: float = 0.0,
                       parameters: Sequence[str] = ..., terminal_only: bool = False) -> RolloutGradients: ...

class _Report:
    status: str
    message: str
    warnings: List[str]
    timings: Dict[str, float]

class IdentificationResult(_Report):
    model_name: str
    configuration: str
    configurations: List["IdentificationResult"]
    has_fit: bool
    evaluate_only: bool
    cost: float
    parameters: Dict[str, float]
    std_errors: Dict[str, float]
    covariance_method: str
    correlation: Array
    singular_values: List[float]
    identifiable: bool
    weak_directions: List[Dict[str, Any]]
    physically_consistent: bool
    relative_error: Dict[str, float]
    train: List[Dict[str, Any]]
    validation: Optional[List[Dict[str, Any]]]
    train_rmse_q: float
    validation_rmse_q: Optional[float]
    train_torque: Optional[Dict[str, Any]]
    stop_reason: str
    rounds: int
    fitted: Trajectories
    measured: Trajectories
    start_states: Dict[str, Dict[str, Any]]
    def full_report(self) -> str: ...

class RolloutResult(_Report):
    trajectories: Trajectories
    num_samples: int
    steps_per_second: float
    targets: List[Dict[str, Any]]

class CompareResult(_Report):
    predictions: Trajectories
    mean_rmse_q: float
    mean_rmse_qd: float
    per_trajectory: List[Dict[str, Any]]
    torque: Optional[Dict[str, Any]]

class TrainAugmentResult(_Report):
    trained_model: str
    num_parameters: int
    epochs_completed: int
    best_epoch: int
    best_validation_loss: float
    initial_validation_loss: float
    history: List[Dict[str, float]]
    best_parameters: Array
    physical: Dict[str, float]
    validation_rmse_q: Optional[float]

class DiscoverResult(_Report):
    verdict: str
    explained_by_candidates: bool
    explained_fraction: float
    sites: List[str]
    analytical_validation_loss: float
    dense_validation_loss: float
    chosen_validation_loss: float
    chosen_lambda: float
    retrained_validation_loss: Optional[float]
    augment_yaml: str
    groups: List[Dict[str, Any]]
    selected: Dict[str, List[str]]
    path: List[Dict[str, float]]

class DistillResult(_Report):
    system: str
    dataset_samples: int
    history: Optional[List[Dict[str, float]]]
    validation_rmse: Array
    mpc_ok: Optional[int]
    network_ok: Optional[int]

class GradientCheckSummary:
    passed: bool
    methods: List[str]
    tolerance: float
    max_relative_error: float
    disagreeing: int
    unresolved: int
    cost: float
    rows: List[Dict[str, Any]]
    def report(self) -> str: ...
def check_identification_gradient(config: Config, overrides: Overrides = None, seed: int = 0, threads: int = 0,
                                  tolerance: float = 1e-5) -> GradientCheckSummary: ...
def check_training_gradient(config: Config, overrides: Overrides = None, seed: int = 0, threads: int = 0,
                            tolerance: float = 1e-5, max_weights: int = 40) -> GradientCheckSummary: ...
def identify(config: Config, overrides: Overrides = None, seed: int = 0, threads: int = 0,
             checkpoint: Optional[str] = None, resume: bool = False,
             evaluate: Optional[Union[str, os.PathLike]] = None) -> IdentificationResult: ...
def rollout(config: Config, overrides: Overrides = None, seed: int = 0, threads: int = 0,
            weights: Optional[str] = None) -> RolloutResult: ...
def compare(config: Config, data: Union[str, os.PathLike], overrides: Overrides = None, seed: int = 0,
            threads: int = 0, weights: Optional[str] = None) -> CompareResult: ...
def train_augment(config: Config, overrides: Overrides = None, seed: int = 0, threads: int = 0,
                  checkpoint: Optional[str] = None, resume: bool = False) -> TrainAugmentResult: ...
def discover(config: Config, overrides: Overrides = None, seed: int = 0, threads: int = 0,
             checkpoint: Optional[str] = None, resume: bool = False) -> DiscoverResult: ...
def distill_mpc(config: Config, overrides: Overrides = None, seed: int = 0, threads: int = 0,
                checkpoint: Optional[str] = None, resume: bool = False) -> DistillResult: ...
def import_recordings(config: Config) -> Trajectories: ...
