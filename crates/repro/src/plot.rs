//! Writing an experiment's figures when the options ask for plots.

use crate::{Options, ReproError};
use shoal_plot::Figure;

/// Writes `fig` as `stem`.svg/.png/.csv into the plots folder, if there is one, and notes the
/// files in `progress`. Series without points are left out (e.g. no long flow completed at
/// some point); a figure left with none is noted and skipped.
pub(crate) fn emit(
    opts: &Options,
    mut fig: Figure,
    stem: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<(), ReproError> {
    let Some(dir) = &opts.plots else {
        return Ok(());
    };
    fig.series.retain(|s| !s.points.is_empty());
    if fig.series.is_empty() {
        progress(&format!("{stem}: nothing to plot (no point has data)"));
        return Ok(());
    }
    let written = shoal_plot::write(&fig, dir, stem)
        .map_err(|e| ReproError(format!("{stem}: cannot write the figure: {e}")))?;
    progress(&format!(
        "{stem}: wrote {}, {} and {}",
        written.svg.display(),
        written.png.display(),
        written.csv.display()
    ));
    Ok(())
}
