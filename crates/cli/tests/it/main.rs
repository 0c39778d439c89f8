//! The integration tests of `cli`, one binary (one link of the whole
//! pipeline instead of one per file). Each module is one former test file. Tests that
//! measure the whole process (`tests/linear_scaling.rs` counts every allocation) stay
//! binaries of their own.

mod algorithm_events;
mod array_calls;
mod cardinality_run;
mod check_cli;
mod clocked;
mod digital_logic;
mod division_by_zero;
mod dynamic_state_selection;
mod e2e_simulation;
mod evaluate_annotation;
mod examples_run;
mod external_c_code;
mod external_functions;
mod fluid_initialization;
mod fluid_mechanisms;
mod fmu_export;
mod function_derivatives;
mod function_inverses;
mod function_locals;
mod function_loops;
mod functional_arguments;
mod hidden_constraints;
mod if_asserts_and_tuples;
mod least_squares;
mod library_components;
mod library_support;
mod loop_mechanisms;
mod lu_factorization;
mod mode_dependent_equations;
mod native_tapes;
mod ode_jacobian;
mod operator_records;
mod overconstrained_loops;
mod parameter_calls;
mod picosecond_events;
mod record_outputs_differentiated;
mod references;
mod replaceable_media;
mod scalar_function_arrays;
mod scalar_functions;
mod simulate_cli;
mod state_graphs;
mod state_machines;
mod static_state_selection;
mod string_variables;
mod thyristor_rectifier;
mod water_properties;
mod when_at_initialization;
mod zero_call_outputs;
mod zero_crossing_blocks;
