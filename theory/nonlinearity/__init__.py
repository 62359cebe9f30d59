"""Other attention nonlinearities on the paper's task: the family (erf, linear, tanh, relu,
sigmoid element-wise; softmax over tokens), chosen by name, and their population risk and
gradient by quadrature (docs/math/nonlinearities.md)."""

from .family import (NONLINEARITY_NAMES, Elementwise, Erf, Linear, Nonlinearity, ReLU, Sigmoid,
                     Softmax, Tanh, nonlinearity)
from .risk import (population_risk_sigma, population_risk_sigma_grad, population_risk_sigma_quad,
                   risk_grad_sigma)

__all__ = [
    "NONLINEARITY_NAMES", "Elementwise", "Erf", "Linear", "Nonlinearity", "ReLU", "Sigmoid",
    "Softmax", "Tanh", "nonlinearity",
    "population_risk_sigma", "population_risk_sigma_grad", "population_risk_sigma_quad",
    "risk_grad_sigma",
]
