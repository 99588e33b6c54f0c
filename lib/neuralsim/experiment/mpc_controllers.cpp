// Placeholder: the MPC controller kinds of the registry (issue 14).
namespace neuralsim {}
