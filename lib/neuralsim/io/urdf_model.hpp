// Models described in URDF (parsed with urdfdom). The options and the
// fixed-joint merging are documented in docs/models.md, section "URDF".
//
// Mapping:
//  - a root link named "world" is the fixed world (body -1); any other root
//    link becomes body 0, attached to the world by a kFree joint named
//    "floating_base" (options.floating_base) or a kFixed joint "fixed_base";
//  - revolute/continuous -> kRevolute, prismatic -> kPrismatic, fixed ->
//    kFixed, floating -> kFree; planar is rejected (ModelError);
//  - with merge_fixed_joints, a link attached by a fixed joint is merged into
//    its parent body (inertia, geometry, children) and kept as a Frame;
//  - <sphere>, <box>, <cylinder>, <capsule> become Geometry primitives,
//    <mesh> a kMesh entry (mesh_file = resolved path, size = scale); meshes
//    are never loaded, and a missing mesh file only logs a warning;
//  - the joints must form a tree: a kinematic cycle or a link with two
//    parent joints is a ModelError naming the joints and links.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/model/model.hpp"

namespace neuralsim {

// A URDF file is read whole, at most this big (README, "Limits").
inline constexpr unsigned long long kMaxUrdfBytes = 64ULL << 20;

struct UrdfOptions {
  // Attach a root link that is not "world" by a free joint (else fixed).
  bool floating_base = false;
  // Merge links attached by fixed joints into their parent body (as
  // Pinocchio does), so the algorithms only visit moving bodies.
  bool merge_fixed_joints = true;
  // Links that stay separate bodies (kFixed joint) even when merging.
  std::vector<std::string> keep_fixed_links;
};

// Loads a URDF file. Mesh paths are resolved relative to the file's
// directory. Errors (a path that is not a readable regular file, a file
// over kMaxUrdfBytes, invalid XML or URDF) are ModelError naming the file. Warnings (a missing mesh file, once per file; an ignored
// floating_base) are appended to `warnings` when not null.
Model<double> load_urdf_model(const std::string& path, const UrdfOptions& options = {},
                              std::vector<std::string>* warnings = nullptr);

// Builds a model from URDF text. `source` names it in error messages, and its
// directory (if it has one) is where relative mesh paths are looked up.
Model<double> build_urdf_model(const std::string& xml, const std::string& source, const UrdfOptions& options = {},
                               std::vector<std::string>* warnings = nullptr);

}  // namespace neuralsim
