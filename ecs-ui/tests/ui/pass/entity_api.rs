//! The entity-level API compiles as a user writes it: chained
//! `EntityWorldMut` calls, pairwise `&mut` access to two entities, a built
//! bundle spawned through `spawn`, `take` across worlds, `Has` and `AnyOf`
//! in systems beside `&mut` access to the same type.
use archetable::prelude::*;
use archetable::{AnyOf, EntityBuilder, Has};

#[derive(Component)]
struct Health(u32);

#[derive(Component)]
struct Armor(u32);

#[derive(Component)]
struct Target(Entity);

fn attack(attackers: Query<(Entity, &Target)>, mut health: Query<&mut Health>) {
    for (me, target) in attackers.iter() {
        if let Ok([mut mine, mut theirs]) = health.get_many_mut([me, target.0]) {
            theirs.0 -= 1;
            mine.0 += 1;
        }
    }
}

fn armor_up(mut q: Query<(&mut Health, Has<Health>, AnyOf<(&Armor, &Target)>)>) {
    for (mut health, has, (armor, _)) in q.iter_mut() {
        if has {
            health.0 += armor.map_or(0, |a| a.0);
        }
    }
}

fn main() {
    let mut world = World::new();
    let a = world.spawn(Health(10));
    let b = world.spawn((Health(5), Target(a)));
    world.entity_mut(a).unwrap().insert(Armor(2)).insert(Target(b)).get_mut::<Health>().unwrap().0 += 1;
    let [mut x, mut y] = world.query_many_mut::<&mut Health, 2>([a, b]).unwrap();
    std::mem::swap(&mut x.0, &mut y.0);
    let mut builder = EntityBuilder::new();
    builder.add(Health(1)).add(Armor(1));
    world.spawn(builder.build());
    let mut schedule = Schedule::new();
    schedule.add_system(attack);
    schedule.add_system(armor_up);
    schedule.run(&mut world);
    let mut other = World::new();
    other.spawn(world.take(a).unwrap());
}
