// Collision detection for one model: the list of candidate pairs is built
// once from the model's collision primitives, the ground and the point sets
// (broad phase by construction: bodies are few and pairs are static), then
// detect() runs the narrow phase on every pair into a preallocated contact
// array. Nothing is allocated per step.
//
// Supported pairs (narrow_phase.hpp): sphere/box/capsule/cylinder/point –
// plane; sphere–sphere, sphere–box, sphere–capsule, capsule–box. Cylinders
// collide as capsules of the same radius and half-length with spheres and
// boxes (exact along the side, which is where a pusher tip touches). Other
// shape pairs (box–box, capsule–capsule, meshes) are not supported and are
// listed in skipped_pairs(); planes attached to moving bodies are ignored.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/contact/contact.hpp"
#include "neuralsim/contact/contact_settings.hpp"
#include "neuralsim/contact/narrow_phase.hpp"
#include "neuralsim/dynamics/kinematics.hpp"

namespace neuralsim {

struct ContactPair {
  enum class Kind { kSpherePlane, kBoxPlane, kCapsulePlane, kCylinderPlane, kPointPlane, kSphereSphere, kSphereBox,
                    kSphereCapsule, kCapsuleBox };
  Kind kind = Kind::kSpherePlane;
  int shape_a = -1, shape_b = -1;  // indices into Model::geometries (-1: none)
  int plane = -1;                  // world plane: -1 = the configured ground, else a geometry index
  int point_set = -1, point = -1;  // for kPointPlane
  int body_a = -1, body_b = -1;
  int max_hits = 1;
};

// A hit of a world-plane pair whose deepest point is fixed in the body up to
// a constant world offset (sphere, box corner, capsule end, contact point):
// the narrow phase's vertex is v = r + Eᵀ local + offset (X_world = (E, r)),
// its signed distance n·v - plane_offset and its contact point v - n d/2.
// grad/force_contact_node.hpp differentiates force contact through these.
struct PlaneWitness {
  int pair = -1, feature = 0, body = -1;
  Eigen::Vector3d local = Eigen::Vector3d::Zero();
  Eigen::Vector3d offset = Eigen::Vector3d::Zero();
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  double plane_offset = 0;
};

template <class S>
class ContactGeometry {
 public:
  ContactGeometry(const Model<double>& model, const ContactSettings& settings) : settings_(settings) {
    build_pairs(model);
    int hits = 0;
    for (const auto& p : pairs_) hits += p.max_hits;
    contacts_.resize(hits);
    hits_.resize(8);
    for (const Geometry& g : model.geometries) geometries_.push_back(g);
  }

  const std::vector<ContactPair>& pairs() const { return pairs_; }
  const std::vector<std::string>& skipped_pairs() const { return skipped_; }
  int max_contacts() const { return static_cast<int>(contacts_.size()); }

  // Runs the narrow phase at the kinematics in `data` (forward_kinematics
  // done) and keeps contacts with distance <= margin. With `velocities`,
  // data.v must hold body velocities and relative velocities are filled.
  // Pairs marked 1 in `skip` (size pairs().size()) are left out.
  int detect(const Model<S>& model, const Data<S>& data, bool velocities, double margin,
             const std::vector<char>* skip = nullptr) {
    (void)model;
    num_ = 0;
    for (int pi = 0; pi < static_cast<int>(pairs_.size()); ++pi) {
      if (skip != nullptr && (*skip)[static_cast<std::size_t>(pi)]) continue;
      const ContactPair& pair = pairs_[pi];
      const int n = narrow_phase(pair, data, hits_.data());
      for (int k = 0; k < n; ++k) {
        if (to_double(hits_[k].distance) > margin) continue;
        Contact<S>& c = contacts_[num_++];
        c.pair = pi;
        c.feature = k;
        c.body_a = pair.body_a;
        c.body_b = pair.body_b;
        c.point = hits_[k].point;
        c.normal = hits_[k].normal;
        c.distance = hits_[k].distance;
        c.frame = contact_frame<S>(c.normal);
        c.force.setZero();
        c.normal_force = S(0);
        if (velocities) {
          c.relative_velocity = point_velocity(data, c.body_a, c.point) - point_velocity(data, c.body_b, c.point);
          c.normal_velocity = c.normal.dot(c.relative_velocity);
          c.tangential_velocity = c.relative_velocity - c.normal_velocity * c.normal;
        }
      }
    }
    return num_;
  }

  int num_contacts() const { return num_; }

  // Appends the hits of pair `pi` as PlaneWitness when the pair is a sphere,
  // box, capsule or contact point against a world plane (a cylinder's rim
  // point moves in its body: not a witness); returns whether it did.
  bool plane_witnesses(int pi, std::vector<PlaneWitness>& out) const {
    const ContactPair& p = pairs_[static_cast<std::size_t>(pi)];
    PlaneWitness w;
    w.pair = pi;
    w.body = p.body_a;
    if (p.plane < 0) {
      w.normal = settings_.ground.normal;
      w.plane_offset = settings_.ground.height;
    } else {
      const Geometry& g = geometries_[p.plane];
      w.normal = (g.placement.linear() * g.size).normalized();
      w.plane_offset = w.normal.dot(g.placement.translation());
    }
    auto add = [&](const Eigen::Vector3d& local, double radius) {
      w.local = local;
      w.offset = -radius * w.normal;
      out.push_back(w);
      ++w.feature;
    };
    if (p.kind == Kind::kPointPlane) {
      add(settings_.point_sets[p.point_set].points[p.point], 0.0);
      return true;
    }
    if (p.kind != Kind::kSpherePlane && p.kind != Kind::kBoxPlane && p.kind != Kind::kCapsulePlane) return false;
    const Geometry& g = geometries_[p.shape_a];
    const Eigen::Matrix3d Rg = g.placement.linear();
    const Eigen::Vector3d tg = g.placement.translation();
    if (p.kind == Kind::kSpherePlane) {
      add(tg, g.size[0]);
    } else if (p.kind == Kind::kCapsulePlane) {  // the end spheres, +hl first (capsule_plane)
      add(tg + g.size[1] * Rg.col(2), g.size[0]);
      add(tg - g.size[1] * Rg.col(2), g.size[0]);
    } else {  // corners in box_plane's order
      for (int sx = -1; sx <= 1; sx += 2)
        for (int sy = -1; sy <= 1; sy += 2)
          for (int sz = -1; sz <= 1; sz += 2)
            add(tg + Rg * Eigen::Vector3d(sx * g.size.x(), sy * g.size.y(), sz * g.size.z()), 0.0);
    }
    return true;
  }
  std::vector<Contact<S>>& contacts() { return contacts_; }
  const std::vector<Contact<S>>& contacts() const { return contacts_; }

  // World velocity of the material point of `body` at world point p.
  static Vec3<S> point_velocity(const Data<S>& data, int body, const Vec3<S>& p) {
    if (body < 0) return Vec3<S>::Zero();
    const Transform<S>& X = data.X_world[body];
    return body_point_velocity_world(data, body, Vec3<S>(X.E * (p - X.r)));
  }

 private:
  using Kind = ContactPair::Kind;

  ShapePose<S> shape_pose(const Data<S>& data, int g) const {
    const Geometry& geom = geometries_[g];
    ShapePose<S> pose;
    const Mat3<S> Rg = geom.placement.linear().template cast<S>();
    const Vec3<S> tg = geom.placement.translation().template cast<S>();
    if (geom.body < 0) {
      pose.R = Rg;
      pose.c = tg;
    } else {
      const Transform<S>& X = data.X_world[geom.body];
      const Mat3<S> Rb = X.E.transpose();
      pose.R = Rb * Rg;
      pose.c = X.r + Rb * tg;
    }
    return pose;
  }

  void plane_of(int plane, Vec3<S>& n, S& offset) const {
    if (plane < 0) {
      n = settings_.ground.normal.template cast<S>();
      offset = S(settings_.ground.height);
      return;
    }
    const Geometry& g = geometries_[plane];
    const Eigen::Vector3d nw = (g.placement.linear() * g.size).normalized();
    n = nw.template cast<S>();
    offset = S(nw.dot(g.placement.translation()));
  }

  int narrow_phase(const ContactPair& p, const Data<S>& data, Hit<S>* out) const {
    Vec3<S> n;
    S offset;
    switch (p.kind) {
      case Kind::kSpherePlane: {
        plane_of(p.plane, n, offset);
        return sphere_plane<S>(shape_pose(data, p.shape_a).c, geometries_[p.shape_a].size[0], n, offset, out);
      }
      case Kind::kBoxPlane:
        plane_of(p.plane, n, offset);
        return box_plane<S>(shape_pose(data, p.shape_a), geometries_[p.shape_a].size, n, offset, out);
      case Kind::kCapsulePlane: {
        plane_of(p.plane, n, offset);
        const Geometry& g = geometries_[p.shape_a];
        return capsule_plane<S>(shape_pose(data, p.shape_a), g.size[0], g.size[1], n, offset, out);
      }
      case Kind::kCylinderPlane: {
        plane_of(p.plane, n, offset);
        const Geometry& g = geometries_[p.shape_a];
        return cylinder_plane<S>(shape_pose(data, p.shape_a), g.size[0], g.size[1], n, offset, out);
      }
      case Kind::kPointPlane: {
        plane_of(p.plane, n, offset);
        const Vec3<S> local = settings_.point_sets[p.point_set].points[p.point].template cast<S>();
        return sphere_plane<S>(body_point_world(data, p.body_a, local), 0.0, n, offset, out);
      }
      case Kind::kSphereSphere:
        return sphere_sphere<S>(shape_pose(data, p.shape_a).c, geometries_[p.shape_a].size[0],
                                shape_pose(data, p.shape_b).c, geometries_[p.shape_b].size[0], out);
      case Kind::kSphereBox:
        return sphere_box<S>(shape_pose(data, p.shape_a).c, geometries_[p.shape_a].size[0],
                             shape_pose(data, p.shape_b), geometries_[p.shape_b].size, out);
      case Kind::kSphereCapsule: {
        const Geometry& b = geometries_[p.shape_b];
        return sphere_capsule<S>(shape_pose(data, p.shape_a).c, geometries_[p.shape_a].size[0],
                                 shape_pose(data, p.shape_b), b.size[0], b.size[1], out);
      }
      case Kind::kCapsuleBox: {
        const Geometry& a = geometries_[p.shape_a];
        return capsule_box<S>(shape_pose(data, p.shape_a), a.size[0], a.size[1], shape_pose(data, p.shape_b),
                              geometries_[p.shape_b].size, out);
      }
    }
    return 0;
  }

  static bool collides(const Geometry& g) {
    return g.collision && g.type != Geometry::Type::kMesh;
  }

  void build_pairs(const Model<double>& model) {
    using T = Geometry::Type;
    const auto& G = model.geometries;
    std::vector<bool> has_points(model.num_bodies(), false);
    for (const PointSet& ps : settings_.point_sets) has_points[ps.body] = true;
    // World planes: the configured ground plus plane geometries fixed in the world.
    std::vector<int> planes;
    if (settings_.ground.enabled) planes.push_back(-1);
    for (int g = 0; g < static_cast<int>(G.size()); ++g)
      if (collides(G[g]) && G[g].type == T::kPlane && G[g].body < 0) planes.push_back(g);

    auto name = [&](int g) { return G[g].name.empty() ? "geometry " + std::to_string(g) : G[g].name; };
    // Shape – world plane.
    for (int g = 0; g < static_cast<int>(G.size()); ++g) {
      if (!collides(G[g]) || G[g].body < 0 || G[g].type == T::kPlane || has_points[G[g].body]) continue;
      for (int plane : planes) {
        ContactPair p;
        p.shape_a = g;
        p.plane = plane;
        p.body_a = G[g].body;
        switch (G[g].type) {
          case T::kSphere: p.kind = Kind::kSpherePlane; break;
          case T::kBox: p.kind = Kind::kBoxPlane; p.max_hits = 8; break;
          case T::kCapsule: p.kind = Kind::kCapsulePlane; p.max_hits = 2; break;
          case T::kCylinder: p.kind = Kind::kCylinderPlane; p.max_hits = 6; break;
          default: continue;
        }
        pairs_.push_back(p);
      }
    }
    // Point sets – world planes.
    for (int s = 0; s < static_cast<int>(settings_.point_sets.size()); ++s)
      for (int k = 0; k < static_cast<int>(settings_.point_sets[s].points.size()); ++k)
        for (int plane : planes) {
          ContactPair p;
          p.kind = Kind::kPointPlane;
          p.point_set = s;
          p.point = k;
          p.plane = plane;
          p.body_a = settings_.point_sets[s].body;
          pairs_.push_back(p);
        }
    // Shape – shape: always against world-fixed shapes; between bodies only
    // with self_collision, never between a body and its parent (their
    // shapes overlap at the joint by design).
    auto adjacent = [&](int a, int b) {
      return (a >= 0 && model.joints[a].parent == b) || (b >= 0 && model.joints[b].parent == a);
    };
    for (int i = 0; i < static_cast<int>(G.size()); ++i)
      for (int j = i + 1; j < static_cast<int>(G.size()); ++j) {
        if (!collides(G[i]) || !collides(G[j]) || G[i].type == T::kPlane || G[j].type == T::kPlane) continue;
        const int bi = G[i].body, bj = G[j].body;
        if (bi == bj || (bi < 0 && bj < 0)) continue;
        if (bi >= 0 && bj >= 0 && (!settings_.self_collision || adjacent(bi, bj))) continue;
        add_shape_pair(G, i, j, name(i) + " – " + name(j));
      }
  }

  void add_shape_pair(const std::vector<Geometry>& G, int i, int j, const std::string& what) {
    using T = Geometry::Type;
    auto rank = [](T t) {  // order so that a is the "rounder" shape
      switch (t) {
        case T::kSphere: return 0;
        case T::kCapsule:
        case T::kCylinder: return 1;
        case T::kBox: return 2;
        default: return 3;
      }
    };
    if (rank(G[j].type) < rank(G[i].type)) std::swap(i, j);
    const int ra = rank(G[i].type), rb = rank(G[j].type);
    ContactPair p;
    p.shape_a = i;
    p.shape_b = j;
    p.body_a = G[i].body;
    p.body_b = G[j].body;
    if (ra == 0 && rb == 0)
      p.kind = Kind::kSphereSphere;
    else if (ra == 0 && rb == 1)
      p.kind = Kind::kSphereCapsule;
    else if (ra == 0 && rb == 2)
      p.kind = Kind::kSphereBox;
    else if (ra == 1 && rb == 2)
      p.kind = Kind::kCapsuleBox;
    else {
      skipped_.push_back(what + " (pair not supported)");
      return;
    }
    pairs_.push_back(p);
  }

  ContactSettings settings_;
  std::vector<Geometry> geometries_;
  std::vector<ContactPair> pairs_;
  std::vector<std::string> skipped_;
  std::vector<Contact<S>> contacts_;
  std::vector<Hit<S>> hits_;
  int num_ = 0;
};

}  // namespace neuralsim
