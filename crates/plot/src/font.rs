//! The one font every label uses, embedded because a fresh CI machine has none and plotters'
//! `ab_glyph` backend fails every label with `FontUnavailable` until a font is registered.

use std::sync::OnceLock;

use plotters::style::{FontStyle, register_font};

use crate::error::PlotError;

/// DejaVu Sans (Bitstream Vera licence, see `assets/fonts/LICENSE-DejaVu`).
static DEJAVU_SANS: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The family name the drawing code asks for; SVG viewers resolve it to their own sans-serif.
pub(crate) const FAMILY: &str = "sans-serif";

/// Registers the font on first use; later calls only report how that went.
pub(crate) fn ensure() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok =
        *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok());
    if ok { Ok(()) } else { Err(PlotError::Font) }
}
