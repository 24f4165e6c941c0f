//! Writing an experiment's figure when the options ask for plots.

use crate::{Options, ReproError};
use shoal_plot::Figure;

/// Writes `fig` as `stem`.svg/.png/.csv into the plots folder, if there is one; returns a
/// progress note naming the files.
pub(crate) fn emit(opts: &Options, fig: &Figure, stem: &str) -> Result<Option<String>, ReproError> {
    let Some(dir) = &opts.plots else {
        return Ok(None);
    };
    let written = shoal_plot::write(fig, dir, stem)
        .map_err(|e| ReproError(format!("{stem}: cannot write the figure: {e}")))?;
    Ok(Some(format!(
        "{stem}: wrote {}, {} and {}",
        written.svg.display(),
        written.png.display(),
        written.csv.display()
    )))
}
