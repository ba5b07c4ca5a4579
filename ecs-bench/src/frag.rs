//! The fragmented iteration workload's data: 26 component types, `A` to
//! `Z`, each on [`PER_ARCHETYPE`] entities that also carry [`Data`], so
//! `Data` is spread over 26 small archetypes. One builder per engine.

/// The value every fragmented entity carries.
#[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq)]
pub struct Data(pub f32);

/// Entities per archetype.
pub const PER_ARCHETYPE: usize = 20;

macro_rules! letters {
    ($($letter:ident)*) => {
        $(
            #[doc = concat!("Component `", stringify!($letter), "`: one archetype per letter.")]
            #[derive(archetable::Component, bevy_ecs::component::Component, Clone, Copy, Debug, PartialEq)]
            pub struct $letter(pub f32);
        )*

        /// Number of letter components, and so of archetypes.
        pub const ARCHETYPES: usize = [$(stringify!($letter)),*].len();

        /// The fragmented world on `archetable`.
        pub fn ours_world() -> archetable::World {
            let mut world = archetable::World::new();
            $(
                world.spawn_batch((0..PER_ARCHETYPE).map(|i| ($letter(0.0), Data(i as f32)))).for_each(drop);
            )*
            world
        }

        /// The fragmented world on `hecs`.
        pub fn hecs_world() -> hecs::World {
            let mut world = hecs::World::new();
            $(
                world.spawn_batch((0..PER_ARCHETYPE).map(|i| ($letter(0.0), Data(i as f32)))).for_each(drop);
            )*
            world
        }

        /// The fragmented world on `bevy_ecs`.
        pub fn bevy_world() -> bevy_ecs::world::World {
            let mut world = bevy_ecs::world::World::new();
            $(
                world.spawn_batch((0..PER_ARCHETYPE).map(|i| ($letter(0.0), Data(i as f32)))).for_each(drop);
            )*
            world
        }
    };
}

letters!(A B C D E F G H I J K L M N O P Q R S T U V W X Y Z);

/// The raw floor's data: one `Vec<Data>` per archetype.
pub fn raw() -> Vec<Vec<Data>> {
    (0..ARCHETYPES).map(|_| (0..PER_ARCHETYPE).map(|i| Data(i as f32)).collect()).collect()
}
