// Placeholder: filled in by the real-data work (issue 13).
namespace neuralsim {}
