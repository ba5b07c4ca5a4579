//! `Name`: a shared, value-compared text component; lookups by name, the
//! entity's `Debug`, and labels that messages use.

use std::collections::HashSet;
use std::sync::Arc;

use archetable::prelude::*;
use archetable::EntityLabel;

#[derive(Component, Debug, PartialEq, Clone)]
#[component(clone)]
struct Hp(u32);

#[test]
fn names_compare_hash_and_print_by_their_text_and_clone_shares_it() {
    let a = Name::new("orc");
    let b = Name::from(String::from("orc"));
    assert_eq!(a, b);
    assert_eq!(a, "orc");
    assert_ne!(a, Name::from("Orc"));
    assert!(Name::new("a") < Name::new("b"));
    let set: HashSet<Name> = [a.clone(), b.clone(), Name::new("elf")].into_iter().collect();
    assert_eq!(set.len(), 2);
    assert!(set.contains("orc"), "looked up by &str through Borrow");
    assert_eq!(format!("{a:?}"), "\"orc\"");
    assert_eq!(format!("{a}"), "orc");
    assert_eq!(format!("{:?}", Name::new("say \"hi\"")), r#""say \"hi\"""#);
    assert_eq!(Name::default(), "");
    assert_eq!(a.len(), 3, "derefs to str");
    // A clone points at the same text.
    let c = a.clone();
    assert!(std::ptr::eq(a.as_str().as_ptr(), c.as_str().as_ptr()));
    let shared: Arc<str> = Arc::from("shared");
    let d = Name::new(shared.clone());
    assert_eq!(Arc::strong_count(&shared), 2);
    drop(d);
    assert_eq!(Arc::strong_count(&shared), 1);
}

#[test]
fn entities_named_finds_every_entity_of_that_name_and_skips_disabled() {
    let mut world = World::new();
    let a = world.spawn((Name::new("guard"), Hp(1)));
    let king = world.spawn(Name::new("king"));
    let b = world.spawn(Name::new("guard"));
    let c = world.spawn((Name::new("guard"), Hp(2)));
    world.spawn(Hp(3));
    let mut guards: Vec<Entity> = world.entities_named("guard").collect();
    guards.sort();
    assert_eq!(guards, [a, b, c]);
    assert_eq!(world.entities_named("king").collect::<Vec<_>>(), [king]);
    assert_eq!(world.entities_named("").count(), 0);
    assert_eq!(world.entities_named("guar").count(), 0, "whole text only");
    world.disable(b).unwrap();
    let mut guards: Vec<Entity> = world.entities_named("guard").collect();
    guards.sort();
    assert_eq!(guards, [a, c]);
    // Renaming through `get_mut`, and by insert.
    world.get_mut::<Name>(a).unwrap().set("captain");
    world.insert(c, Name::new("captain")).unwrap();
    assert_eq!(world.entities_named("guard").count(), 0);
    assert_eq!(world.entities_named("captain").count(), 2);
    // In a query, like any component.
    let named: Vec<(Entity, u32)> = world.query::<(Entity, &Name, &Hp)>().map(|(e, _, hp)| (e, hp.0)).collect();
    assert_eq!(named.len(), 2);
    // A world without names at all.
    assert_eq!(World::new().entities_named("x").count(), 0);
}

#[test]
fn entity_debug_and_labels_show_the_name() {
    let mut world = World::new();
    let orc = world.spawn((Name::new("orc"), Hp(3)));
    let rock = world.spawn(Hp(1));
    let shown = format!("{:?}", world.entity(orc).unwrap());
    assert!(shown.starts_with(&format!("EntityRef {{ id: {orc}, name: \"orc\", components: [")), "{shown}");
    let plain = format!("{:?}", world.entity(rock).unwrap());
    assert_eq!(plain, format!("EntityRef {{ id: {rock}, components: [\"engine::names::Hp\"] }}"));
    let through_mut = format!("{:?}", world.entity_mut(orc).unwrap());
    assert_eq!(through_mut, shown);

    let label = world.entity_label(orc);
    assert_eq!(label, EntityLabel { entity: orc, name: Some(Name::new("orc")) });
    assert_eq!(label.to_string(), format!("orc ({orc})"));
    assert_eq!(world.entity_label(rock).to_string(), rock.to_string());
    world.despawn(orc).unwrap();
    assert_eq!(label.to_string(), format!("orc ({orc})"), "a label outlives its entity");
    assert_eq!(world.entity_label(orc).to_string(), orc.to_string());
}

#[test]
fn cloned_entities_and_worlds_keep_names() {
    let mut world = World::new();
    let orc = world.spawn((Name::new("orc"), Hp(3)));
    let copy = world.clone_entity(orc).unwrap();
    assert_eq!(world.get::<Name>(copy), Some(&Name::new("orc")));
    let text = |w: &World, e: Entity| w.get::<Name>(e).unwrap().as_str().as_ptr();
    assert_eq!(text(&world, orc), text(&world, copy), "the copy shares the text");
    let other = world.try_clone().unwrap();
    let mut both: Vec<Entity> = other.entities_named("orc").collect();
    both.sort();
    assert_eq!(both, [orc, copy]);
}
