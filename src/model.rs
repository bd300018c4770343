//! Model generation: a unit's IR, then PROMELA from `templates/`. Not yet implemented: the
//! SPIN issue builds it on the units produced by `units`.
