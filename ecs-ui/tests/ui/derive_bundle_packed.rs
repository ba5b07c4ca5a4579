//! `derive(Bundle)` refuses `repr(packed)`: the world reaches the fields
//! through pointers, which must be aligned.
use archetable::{Bundle, Component};

#[derive(Component)]
struct Tag(u8);

#[derive(Component)]
struct Name(String);

#[derive(Bundle)]
#[repr(C, packed)]
struct Packed {
    tag: Tag,
    name: Name,
}

fn main() {}
