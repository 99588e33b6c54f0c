// Placeholder: filled in by the MPC work (issue 14).
namespace neuralsim {}
