// Serial chains given by Denavit–Hartenberg parameters plus link inertials,
// the form in which manufacturers and papers publish arm models. Read from a
// model file's `dh:` key (docs/models.md):
//
//   dh:
//     convention: modified        # or standard
//     base: {xyz: [0, 0, 0], rpy: [0, 0, 0]}   # optional
//     links:
//       - {name: link1, a: 0, alpha: 0, d: 0.333, theta: 0, type: revolute,
//          mass: 4.97, com: [...], inertia: [...], limits: {...}}
//     end_frame: {name: flange, d: 0.107}      # optional
//
// Conventions (a row's θ and d are offsets; the joint adds q to θ for a
// revolute joint and to d for a prismatic one):
//  - modified (Craig, "Introduction to Robotics", §3.4): the pose of frame i
//    in frame i−1 is RotX(α_{i−1}) TransX(a_{i−1}) RotZ(θ_i) TransZ(d_i); a
//    row holds (a_{i−1}, α_{i−1}, d_i, θ_i). Link i's body frame IS DH frame
//    i, and its inertials are given in it. `end_frame` adds a fixed frame
//    after the last link with its own (a, alpha, d, theta).
//  - standard (Denavit & Hartenberg 1955; Spong et al., "Robot Modeling and
//    Control", §3.2): the pose of frame i in frame i−1 is RotZ(θ_i)
//    TransZ(d_i) TransX(a_i) RotX(α_i). Joint i moves about z_{i−1}, so link
//    i's body frame is frame i−1 moved by joint i; its inertials are given in
//    DH frame i (as published) and are moved into the body frame here.
//    `end_frame` names the fixed frame n (the last row's distal frame).
#pragma once

#include <vector>

#include "neuralsim/io/config.hpp"
#include "neuralsim/model/model.hpp"

namespace neuralsim {

// Appends the chain described by `dh` to `model` (bodies, joints, an
// optional massless end frame) and each body's entry to `sources` (for the
// inertia check's messages). ConfigError naming file:line and key.
void read_dh_chain(const Config& dh, Model<double>& model, std::vector<Config>& sources);

}  // namespace neuralsim
