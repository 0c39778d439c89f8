//! Numeric matrices on file, as the Modelica Standard Library's C utilities exchange them:
//! MATLAB MAT files of version 4 and level 5 (formats "6" and "7", the latter with
//! zlib-compressed elements) and the MSL's text table format (`#1`, `double name(rows,cols)`).
//!
//! Used at translation time (a parameter bound to `readRealMatrix`, a table with
//! `tableOnFile = true`) and at run time (`writeRealMatrix`, `readRealMatrix` with values
//! known only then). The layouts follow the public format descriptions; the code is written
//! here.

mod read;
mod text;
mod write;

pub use read::{read_matrix, read_matrix_size};
pub use text::read_csv;
pub use write::{write_matrix, MatFormat};

/// A real matrix read from a file, its values row by row.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<f64>,
}

impl Matrix {
    /// The element in (0-based) row `r`, column `c`.
    pub fn at(&self, r: usize, c: usize) -> f64 {
        self.data[r * self.cols + c]
    }
}
