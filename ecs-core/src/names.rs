//! Type names as a reader writes them, for messages: shared by every layer
//! that names a type in an error or a warning (systems, required
//! components, observers). Imports nothing.

/// `a::b::Name<'_, c::D>` → `Name<D>`: type names as a reader writes them,
/// without paths or elided lifetimes.
pub(crate) fn short_type_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut segment_start = 0;
    for (i, c) in name.char_indices() {
        match c {
            ':' => segment_start = i + 1,
            '<' | '>' | ',' | ' ' | '(' | ')' | '[' | ']' | ';' | '&' => {
                out.push_str(&name[segment_start..i]);
                out.push(c);
                segment_start = i + 1;
            }
            _ => {}
        }
    }
    out.push_str(&name[segment_start..]);
    out.replace("'_, ", "").replace("<'_>", "").replace(", '_", "")
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_names_drop_paths() {
        assert_eq!(short_type_name("game::Position"), "Position");
        assert_eq!(
            short_type_name(
                "archetable_core::system::query::Query<(&mut game::A, &game::B), archetable_core::query::Without<game::C>>"
            ),
            "Query<(&mut A, &B), Without<C>>"
        );
        assert_eq!(short_type_name("u32"), "u32");
        assert_eq!(short_type_name("game::Set<'_, '_>"), "Set");
        assert_eq!(short_type_name("archetable::Query<'_, '_, &game::A>"), "Query<&A>");
    }
}
