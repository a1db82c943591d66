//! The `.map` format, version 1: limits, parser, validation rules and the renderer.

pub mod limits;
pub mod parse;
pub mod reach;
pub mod render;
pub mod validate;
