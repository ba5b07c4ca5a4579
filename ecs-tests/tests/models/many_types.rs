//! No cap on the number of component types: 300 distinct types, spawned in
//! many combinations, queried one by one and in wide tuples, against a
//! model of which entity holds what. Here rather than in the engine's
//! integration tests: its 300 copies of the generic insert, remove and
//! query paths were half of that binary's code, and the README's
//! `cargo test` builds that binary cold.

use std::collections::{BTreeMap, BTreeSet};

use archetable::prelude::*;

/// Per-type helpers, implemented by the macro for each generated type.
trait Nth: Component + Sized {
    const N: usize;
    fn val(&self) -> u64;
}

macro_rules! declare {
    ($($name:ident = $n:literal,)*) => {
        $(
            #[derive(Component, Debug, PartialEq)]
            struct $name(u64);

            impl Nth for $name {
                const N: usize = $n;
                fn val(&self) -> u64 {
                    self.0
                }
            }
        )*

        const COUNT: usize = [$($n),*].len();

        /// Inserts component number `n` with value `v` into `e`.
        fn insert_nth(world: &mut World, e: Entity, n: usize, v: u64) {
            match n {
                $( $n => world.insert(e, ($name(v),)).unwrap(), )*
                _ => unreachable!(),
            }
        }

        /// Removes component number `n` from `e`, returning its value.
        fn remove_nth(world: &mut World, e: Entity, n: usize) -> u64 {
            match n {
                $( $n => world.remove::<$name>(e).unwrap().0, )*
                _ => unreachable!(),
            }
        }

        /// Reads component number `n` of `e`.
        fn get_nth(world: &World, e: Entity, n: usize) -> Option<u64> {
            match n {
                $( $n => world.get::<$name>(e).map(|c| c.0), )*
                _ => unreachable!(),
            }
        }

        /// Runs `check_type` for every type.
        fn check_all(world: &World, model: &BTreeMap<Entity, BTreeMap<usize, u64>>) {
            $( check_type::<$name>(world, model); )*
        }
    };
}

declare! {
    C0 = 0, C1 = 1, C2 = 2, C3 = 3, C4 = 4, C5 = 5, C6 = 6, C7 = 7, C8 = 8, C9 = 9,
    C10 = 10, C11 = 11, C12 = 12, C13 = 13, C14 = 14, C15 = 15, C16 = 16, C17 = 17, C18 = 18, C19 = 19,
    C20 = 20, C21 = 21, C22 = 22, C23 = 23, C24 = 24, C25 = 25, C26 = 26, C27 = 27, C28 = 28, C29 = 29,
    C30 = 30, C31 = 31, C32 = 32, C33 = 33, C34 = 34, C35 = 35, C36 = 36, C37 = 37, C38 = 38, C39 = 39,
    C40 = 40, C41 = 41, C42 = 42, C43 = 43, C44 = 44, C45 = 45, C46 = 46, C47 = 47, C48 = 48, C49 = 49,
    C50 = 50, C51 = 51, C52 = 52, C53 = 53, C54 = 54, C55 = 55, C56 = 56, C57 = 57, C58 = 58, C59 = 59,
    C60 = 60, C61 = 61, C62 = 62, C63 = 63, C64 = 64, C65 = 65, C66 = 66, C67 = 67, C68 = 68, C69 = 69,
    C70 = 70, C71 = 71, C72 = 72, C73 = 73, C74 = 74, C75 = 75, C76 = 76, C77 = 77, C78 = 78, C79 = 79,
    C80 = 80, C81 = 81, C82 = 82, C83 = 83, C84 = 84, C85 = 85, C86 = 86, C87 = 87, C88 = 88, C89 = 89,
    C90 = 90, C91 = 91, C92 = 92, C93 = 93, C94 = 94, C95 = 95, C96 = 96, C97 = 97, C98 = 98, C99 = 99,
    C100 = 100, C101 = 101, C102 = 102, C103 = 103, C104 = 104, C105 = 105, C106 = 106, C107 = 107, C108 = 108, C109 = 109,
    C110 = 110, C111 = 111, C112 = 112, C113 = 113, C114 = 114, C115 = 115, C116 = 116, C117 = 117, C118 = 118, C119 = 119,
    C120 = 120, C121 = 121, C122 = 122, C123 = 123, C124 = 124, C125 = 125, C126 = 126, C127 = 127, C128 = 128, C129 = 129,
    C130 = 130, C131 = 131, C132 = 132, C133 = 133, C134 = 134, C135 = 135, C136 = 136, C137 = 137, C138 = 138, C139 = 139,
    C140 = 140, C141 = 141, C142 = 142, C143 = 143, C144 = 144, C145 = 145, C146 = 146, C147 = 147, C148 = 148, C149 = 149,
    C150 = 150, C151 = 151, C152 = 152, C153 = 153, C154 = 154, C155 = 155, C156 = 156, C157 = 157, C158 = 158, C159 = 159,
    C160 = 160, C161 = 161, C162 = 162, C163 = 163, C164 = 164, C165 = 165, C166 = 166, C167 = 167, C168 = 168, C169 = 169,
    C170 = 170, C171 = 171, C172 = 172, C173 = 173, C174 = 174, C175 = 175, C176 = 176, C177 = 177, C178 = 178, C179 = 179,
    C180 = 180, C181 = 181, C182 = 182, C183 = 183, C184 = 184, C185 = 185, C186 = 186, C187 = 187, C188 = 188, C189 = 189,
    C190 = 190, C191 = 191, C192 = 192, C193 = 193, C194 = 194, C195 = 195, C196 = 196, C197 = 197, C198 = 198, C199 = 199,
    C200 = 200, C201 = 201, C202 = 202, C203 = 203, C204 = 204, C205 = 205, C206 = 206, C207 = 207, C208 = 208, C209 = 209,
    C210 = 210, C211 = 211, C212 = 212, C213 = 213, C214 = 214, C215 = 215, C216 = 216, C217 = 217, C218 = 218, C219 = 219,
    C220 = 220, C221 = 221, C222 = 222, C223 = 223, C224 = 224, C225 = 225, C226 = 226, C227 = 227, C228 = 228, C229 = 229,
    C230 = 230, C231 = 231, C232 = 232, C233 = 233, C234 = 234, C235 = 235, C236 = 236, C237 = 237, C238 = 238, C239 = 239,
    C240 = 240, C241 = 241, C242 = 242, C243 = 243, C244 = 244, C245 = 245, C246 = 246, C247 = 247, C248 = 248, C249 = 249,
    C250 = 250, C251 = 251, C252 = 252, C253 = 253, C254 = 254, C255 = 255, C256 = 256, C257 = 257, C258 = 258, C259 = 259,
    C260 = 260, C261 = 261, C262 = 262, C263 = 263, C264 = 264, C265 = 265, C266 = 266, C267 = 267, C268 = 268, C269 = 269,
    C270 = 270, C271 = 271, C272 = 272, C273 = 273, C274 = 274, C275 = 275, C276 = 276, C277 = 277, C278 = 278, C279 = 279,
    C280 = 280, C281 = 281, C282 = 282, C283 = 283, C284 = 284, C285 = 285, C286 = 286, C287 = 287, C288 = 288, C289 = 289,
    C290 = 290, C291 = 291, C292 = 292, C293 = 293, C294 = 294, C295 = 295, C296 = 296, C297 = 297, C298 = 298, C299 = 299,
}

/// Queries type `T` and compares the exact (entity, value) list with the
/// model. The generic part is two queries; the comparison is shared by all
/// 300 types, which keeps this test quick to compile.
fn check_type<T: Nth>(world: &World, model: &BTreeMap<Entity, BTreeMap<usize, u64>>) {
    let mut got: Vec<(Entity, u64)> = Vec::new();
    world.query::<(Entity, &T)>().for_each(|(e, c)| got.push((e, c.val())));
    let mut with: Vec<Entity> = Vec::new();
    world.query_filtered::<Entity, With<T>>().for_each(|e| with.push(e));
    compare(T::N, got, with, model);
}

fn compare(
    n: usize,
    mut got: Vec<(Entity, u64)>,
    mut with: Vec<Entity>,
    model: &BTreeMap<Entity, BTreeMap<usize, u64>>,
) {
    got.sort_unstable();
    with.sort_unstable();
    let want: Vec<(Entity, u64)> = model.iter().filter_map(|(e, comps)| comps.get(&n).map(|v| (*e, *v))).collect();
    assert_eq!(got, want, "type {n}");
    let want_with: Vec<Entity> = want.iter().map(|&(e, _)| e).collect();
    assert_eq!(with, want_with, "type {n}: With<T>");
}

/// The component numbers entity `i` gets.
fn signature(i: usize) -> Vec<usize> {
    let mut s = vec![i % COUNT, (i * 7 + 3) % COUNT, (i * i + 11) % COUNT];
    if i.is_multiple_of(4) {
        s.push((i / 4 + 150) % COUNT);
    }
    s.sort_unstable();
    s.dedup();
    s
}

fn value(i: usize, n: usize) -> u64 {
    (i as u64) * 1_000 + n as u64
}

#[test]
fn three_hundred_component_types() {
    assert_eq!(COUNT, 300);
    let mut world = World::new();
    let mut model: BTreeMap<Entity, BTreeMap<usize, u64>> = BTreeMap::new();
    for i in 0..600 {
        let e = world.spawn(());
        let mut comps = BTreeMap::new();
        for n in signature(i) {
            insert_nth(&mut world, e, n, value(i, n));
            comps.insert(n, value(i, n));
        }
        model.insert(e, comps);
    }
    assert_eq!(world.len(), 600);
    check_all(&world, &model);
    for (e, comps) in &model {
        assert_eq!(world.entity(*e).unwrap().component_names().count(), comps.len());
        for (n, v) in comps {
            assert_eq!(get_nth(&world, *e, *n), Some(*v));
        }
    }

    // Mutate: remove one component from some, despawn some, add more.
    let es: Vec<Entity> = model.keys().copied().collect();
    for (k, &e) in es.iter().enumerate() {
        if k.is_multiple_of(5) {
            world.despawn(e).unwrap();
            model.remove(&e);
        } else if k % 5 == 1 {
            let n = *model[&e].keys().next().unwrap();
            assert_eq!(remove_nth(&mut world, e, n), model[&e][&n]);
            model.get_mut(&e).unwrap().remove(&n);
        } else if k % 5 == 2 {
            let n = (k * 13) % COUNT;
            insert_nth(&mut world, e, n, 42);
            model.get_mut(&e).unwrap().insert(n, 42);
        }
    }
    check_all(&world, &model);
}

#[test]
fn one_entity_with_all_types() {
    let mut world = World::new();
    let e = world.spawn((C0(0),));
    let other = world.spawn((C299(299), C0(1)));
    for n in 1..COUNT {
        insert_nth(&mut world, e, n, n as u64);
    }
    let r = world.entity(e).unwrap();
    assert_eq!(r.component_names().count(), COUNT);
    for n in 0..COUNT {
        assert_eq!(get_nth(&world, e, n), Some(n as u64));
    }
    assert_eq!(get_nth(&world, other, 299), Some(299));
    assert_eq!(get_nth(&world, other, 0), Some(1));
    assert_eq!(get_nth(&world, other, 1), None);

    // Wide tuple queries across the range of ids.
    let wide: Vec<(Entity, u64)> = world
        .query::<(Entity, &C0, &C21, &C42, &C63, &C84, &C105, &C126, &C147, &C168, &C189, &C210, &C231, &C252, &C299)>()
        .map(|(e, a, b, c, d, f, g, h, i, j, k, l, m, n, o)| {
            let sum = a.0 + b.0 + c.0 + d.0 + f.0 + g.0 + h.0 + i.0 + j.0 + k.0 + l.0 + m.0 + n.0 + o.0;
            (e, sum)
        })
        .collect();
    assert_eq!(wide, vec![(e, 21 + 42 + 63 + 84 + 105 + 126 + 147 + 168 + 189 + 210 + 231 + 252 + 299)]);
    assert_eq!(
        world.query_filtered::<Entity, (With<C0>, With<C299>, Without<C150>)>().collect::<Vec<_>>(),
        vec![other]
    );
    assert_eq!(world.query_filtered::<Entity, Or<(With<C1>, With<C298>)>>().collect::<Vec<_>>(), vec![e]);

    // Remove them all again, highest first.
    for n in (1..COUNT).rev() {
        assert_eq!(remove_nth(&mut world, e, n), n as u64);
    }
    assert_eq!(world.entity(e).unwrap().component_names().count(), 1);
    assert_eq!(world.get::<C0>(e), Some(&C0(0)));
    assert_eq!(world.query::<&C0>().count(), 2);
}

#[test]
fn query_state_over_many_types() {
    let mut world = World::new();
    let mut state = QueryState::<(Entity, &mut C7, Option<&C250>)>::new(&mut world);
    let mut want = BTreeSet::new();
    for i in 0..COUNT {
        let e = world.spawn((C7(i as u64),));
        insert_nth(&mut world, e, i, 1);
        want.insert(e);
    }
    let mut with_250 = 0;
    for (e, mut c, opt) in state.iter_mut(&mut world) {
        assert!(want.contains(&e));
        c.0 += 1;
        if opt.is_some() {
            with_250 += 1;
        }
    }
    assert_eq!(with_250, 1);
    assert_eq!(state.iter_mut(&mut world).count(), COUNT);
    let total: u64 = world.query::<&C7>().map(|c| c.0).sum();
    // Entity 7 had its C7 overwritten with 1 by insert_nth; then each got +1.
    let expected: u64 = (0..COUNT as u64).map(|i| if i == 7 { 2 } else { i + 1 }).sum();
    assert_eq!(total, expected);
}
