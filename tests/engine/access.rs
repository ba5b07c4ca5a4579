//! The system access checker, case by case: every pair of query parameter
//! kinds (`&A`, `&mut A`, `Option<&A>`, `Option<&mut A>`) against every
//! filter shape, then resources, events and the other parameters. Each case
//! asserts that adding the system is accepted or refused, in both parameter
//! orders. A refusal must name the component or resource.

// The cases spell their parameter types out on purpose.
#![allow(clippy::type_complexity)]

use archetable::prelude::*;

#[derive(Component)]
struct A;
#[derive(Component)]
struct B;
#[derive(Component)]
struct C;
#[derive(Default)]
struct R;
#[derive(Default)]
struct S;
struct E;

/// One case: the outcome of adding `|_: P1, _: P2| {}`, and of the same with
/// the parameters swapped.
macro_rules! case {
    ($expect:ident: $p1:ty, $p2:ty) => {{
        let forward = Schedule::new().try_add_system(|_: $p1, _: $p2| {}).map(|_| ()).map_err(|e| e.to_string());
        let backward = Schedule::new().try_add_system(|_: $p2, _: $p1| {}).map(|_| ()).map_err(|e| e.to_string());
        Case {
            params: concat!(stringify!($p1), " + ", stringify!($p2)),
            expect_ok: stringify!($expect) == "accept",
            forward,
            backward,
        }
    }};
}

struct Case {
    params: &'static str,
    expect_ok: bool,
    forward: Result<(), String>,
    backward: Result<(), String>,
}

fn check(cases: Vec<Case>, item: &str) {
    let mut wrong = Vec::new();
    for case in &cases {
        for (order, result) in [("forward", &case.forward), ("backward", &case.backward)] {
            match result {
                Ok(()) if !case.expect_ok => {
                    wrong.push(format!("{} ({order}): accepted, expected refusal", case.params))
                }
                Err(e) if case.expect_ok => wrong.push(format!("{} ({order}): refused: {e}", case.params)),
                Err(e) if !e.contains("error[E0002]") || !e.contains(item) => {
                    wrong.push(format!("{} ({order}): refusal does not name {item}: {e}", case.params))
                }
                // Each kind of conflict gets its own hint: filters for
                // queries, never for resources.
                Err(e) if e.contains("writes resource `") == e.contains("`With`/`Without`") => {
                    wrong.push(format!("{} ({order}): the hint does not fit the item: {e}", case.params))
                }
                Err(e) if e.contains("writes resource `") && !e.contains("take the resource once") => {
                    wrong.push(format!("{} ({order}): no resource hint: {e}", case.params))
                }
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {} cases wrong:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
}

#[test]
fn query_kinds_against_filter_shapes() {
    let cases = vec![
        case!(accept: Query<&A, ()>, Query<&A, ()>),
        case!(reject: Query<&A, ()>, Query<&mut A, ()>),
        case!(accept: Query<&A, ()>, Query<Option<&A>, ()>),
        case!(reject: Query<&A, ()>, Query<Option<&mut A>, ()>),
        case!(reject: Query<&mut A, ()>, Query<&A, ()>),
        case!(reject: Query<&mut A, ()>, Query<&mut A, ()>),
        case!(reject: Query<&mut A, ()>, Query<Option<&A>, ()>),
        case!(reject: Query<&mut A, ()>, Query<Option<&mut A>, ()>),
        case!(accept: Query<Option<&A>, ()>, Query<&A, ()>),
        case!(reject: Query<Option<&A>, ()>, Query<&mut A, ()>),
        case!(accept: Query<Option<&A>, ()>, Query<Option<&A>, ()>),
        case!(reject: Query<Option<&A>, ()>, Query<Option<&mut A>, ()>),
        case!(reject: Query<Option<&mut A>, ()>, Query<&A, ()>),
        case!(reject: Query<Option<&mut A>, ()>, Query<&mut A, ()>),
        case!(reject: Query<Option<&mut A>, ()>, Query<Option<&A>, ()>),
        case!(reject: Query<Option<&mut A>, ()>, Query<Option<&mut A>, ()>),
        case!(accept: Query<&A, With<B>>, Query<&A, Without<B>>),
        case!(accept: Query<&A, With<B>>, Query<&mut A, Without<B>>),
        case!(accept: Query<&A, With<B>>, Query<Option<&A>, Without<B>>),
        case!(accept: Query<&A, With<B>>, Query<Option<&mut A>, Without<B>>),
        case!(accept: Query<&mut A, With<B>>, Query<&A, Without<B>>),
        case!(accept: Query<&mut A, With<B>>, Query<&mut A, Without<B>>),
        case!(accept: Query<&mut A, With<B>>, Query<Option<&A>, Without<B>>),
        case!(accept: Query<&mut A, With<B>>, Query<Option<&mut A>, Without<B>>),
        case!(accept: Query<Option<&A>, With<B>>, Query<&A, Without<B>>),
        case!(accept: Query<Option<&A>, With<B>>, Query<&mut A, Without<B>>),
        case!(accept: Query<Option<&A>, With<B>>, Query<Option<&A>, Without<B>>),
        case!(accept: Query<Option<&A>, With<B>>, Query<Option<&mut A>, Without<B>>),
        case!(accept: Query<Option<&mut A>, With<B>>, Query<&A, Without<B>>),
        case!(accept: Query<Option<&mut A>, With<B>>, Query<&mut A, Without<B>>),
        case!(accept: Query<Option<&mut A>, With<B>>, Query<Option<&A>, Without<B>>),
        case!(accept: Query<Option<&mut A>, With<B>>, Query<Option<&mut A>, Without<B>>),
        case!(accept: Query<&A, With<B>>, Query<&A, With<C>>),
        case!(reject: Query<&A, With<B>>, Query<&mut A, With<C>>),
        case!(accept: Query<&A, With<B>>, Query<Option<&A>, With<C>>),
        case!(reject: Query<&A, With<B>>, Query<Option<&mut A>, With<C>>),
        case!(reject: Query<&mut A, With<B>>, Query<&A, With<C>>),
        case!(reject: Query<&mut A, With<B>>, Query<&mut A, With<C>>),
        case!(reject: Query<&mut A, With<B>>, Query<Option<&A>, With<C>>),
        case!(reject: Query<&mut A, With<B>>, Query<Option<&mut A>, With<C>>),
        case!(accept: Query<Option<&A>, With<B>>, Query<&A, With<C>>),
        case!(reject: Query<Option<&A>, With<B>>, Query<&mut A, With<C>>),
        case!(accept: Query<Option<&A>, With<B>>, Query<Option<&A>, With<C>>),
        case!(reject: Query<Option<&A>, With<B>>, Query<Option<&mut A>, With<C>>),
        case!(reject: Query<Option<&mut A>, With<B>>, Query<&A, With<C>>),
        case!(reject: Query<Option<&mut A>, With<B>>, Query<&mut A, With<C>>),
        case!(reject: Query<Option<&mut A>, With<B>>, Query<Option<&A>, With<C>>),
        case!(reject: Query<Option<&mut A>, With<B>>, Query<Option<&mut A>, With<C>>),
        case!(accept: Query<&A, With<B>>, Query<&A, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<&A, With<B>>, Query<&mut A, Or<(Without<B>, With<C>)>>),
        case!(accept: Query<&A, With<B>>, Query<Option<&A>, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<&A, With<B>>, Query<Option<&mut A>, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<&mut A, With<B>>, Query<&A, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<&mut A, With<B>>, Query<&mut A, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<&mut A, With<B>>, Query<Option<&A>, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<&mut A, With<B>>, Query<Option<&mut A>, Or<(Without<B>, With<C>)>>),
        case!(accept: Query<Option<&A>, With<B>>, Query<&A, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<Option<&A>, With<B>>, Query<&mut A, Or<(Without<B>, With<C>)>>),
        case!(accept: Query<Option<&A>, With<B>>, Query<Option<&A>, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<Option<&A>, With<B>>, Query<Option<&mut A>, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<Option<&mut A>, With<B>>, Query<&A, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<Option<&mut A>, With<B>>, Query<&mut A, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<Option<&mut A>, With<B>>, Query<Option<&A>, Or<(Without<B>, With<C>)>>),
        case!(reject: Query<Option<&mut A>, With<B>>, Query<Option<&mut A>, Or<(Without<B>, With<C>)>>),
        case!(accept: Query<&A, Or<(With<B>, With<C>)>>, Query<&A, (Without<B>, Without<C>)>),
        case!(accept: Query<&A, Or<(With<B>, With<C>)>>, Query<&mut A, (Without<B>, Without<C>)>),
        case!(accept: Query<&A, Or<(With<B>, With<C>)>>, Query<Option<&A>, (Without<B>, Without<C>)>),
        case!(accept: Query<&A, Or<(With<B>, With<C>)>>, Query<Option<&mut A>, (Without<B>, Without<C>)>),
        case!(accept: Query<&mut A, Or<(With<B>, With<C>)>>, Query<&A, (Without<B>, Without<C>)>),
        case!(accept: Query<&mut A, Or<(With<B>, With<C>)>>, Query<&mut A, (Without<B>, Without<C>)>),
        case!(accept: Query<&mut A, Or<(With<B>, With<C>)>>, Query<Option<&A>, (Without<B>, Without<C>)>),
        case!(accept: Query<&mut A, Or<(With<B>, With<C>)>>, Query<Option<&mut A>, (Without<B>, Without<C>)>),
        case!(accept: Query<Option<&A>, Or<(With<B>, With<C>)>>, Query<&A, (Without<B>, Without<C>)>),
        case!(accept: Query<Option<&A>, Or<(With<B>, With<C>)>>, Query<&mut A, (Without<B>, Without<C>)>),
        case!(accept: Query<Option<&A>, Or<(With<B>, With<C>)>>, Query<Option<&A>, (Without<B>, Without<C>)>),
        case!(accept: Query<Option<&A>, Or<(With<B>, With<C>)>>, Query<Option<&mut A>, (Without<B>, Without<C>)>),
        case!(accept: Query<Option<&mut A>, Or<(With<B>, With<C>)>>, Query<&A, (Without<B>, Without<C>)>),
        case!(accept: Query<Option<&mut A>, Or<(With<B>, With<C>)>>, Query<&mut A, (Without<B>, Without<C>)>),
        case!(accept: Query<Option<&mut A>, Or<(With<B>, With<C>)>>, Query<Option<&A>, (Without<B>, Without<C>)>),
        case!(accept: Query<Option<&mut A>, Or<(With<B>, With<C>)>>, Query<Option<&mut A>, (Without<B>, Without<C>)>),
        case!(accept: Query<&A, Without<B>>, Query<&A, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<&A, Without<B>>, Query<&mut A, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<&A, Without<B>>, Query<Option<&A>, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<&A, Without<B>>, Query<Option<&mut A>, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<&mut A, Without<B>>, Query<&A, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<&mut A, Without<B>>, Query<&mut A, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<&mut A, Without<B>>, Query<Option<&A>, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<&mut A, Without<B>>, Query<Option<&mut A>, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<Option<&A>, Without<B>>, Query<&A, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<Option<&A>, Without<B>>, Query<&mut A, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<Option<&A>, Without<B>>, Query<Option<&A>, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<Option<&A>, Without<B>>, Query<Option<&mut A>, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<Option<&mut A>, Without<B>>, Query<&A, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<Option<&mut A>, Without<B>>, Query<&mut A, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<Option<&mut A>, Without<B>>, Query<Option<&A>, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<Option<&mut A>, Without<B>>, Query<Option<&mut A>, Or<(With<B>, (With<C>, Without<C>))>>),
        case!(accept: Query<&A, (With<B>, Without<C>)>, Query<&A, With<C>>),
        case!(accept: Query<&A, (With<B>, Without<C>)>, Query<&mut A, With<C>>),
        case!(accept: Query<&A, (With<B>, Without<C>)>, Query<Option<&A>, With<C>>),
        case!(accept: Query<&A, (With<B>, Without<C>)>, Query<Option<&mut A>, With<C>>),
        case!(accept: Query<&mut A, (With<B>, Without<C>)>, Query<&A, With<C>>),
        case!(accept: Query<&mut A, (With<B>, Without<C>)>, Query<&mut A, With<C>>),
        case!(accept: Query<&mut A, (With<B>, Without<C>)>, Query<Option<&A>, With<C>>),
        case!(accept: Query<&mut A, (With<B>, Without<C>)>, Query<Option<&mut A>, With<C>>),
        case!(accept: Query<Option<&A>, (With<B>, Without<C>)>, Query<&A, With<C>>),
        case!(accept: Query<Option<&A>, (With<B>, Without<C>)>, Query<&mut A, With<C>>),
        case!(accept: Query<Option<&A>, (With<B>, Without<C>)>, Query<Option<&A>, With<C>>),
        case!(accept: Query<Option<&A>, (With<B>, Without<C>)>, Query<Option<&mut A>, With<C>>),
        case!(accept: Query<Option<&mut A>, (With<B>, Without<C>)>, Query<&A, With<C>>),
        case!(accept: Query<Option<&mut A>, (With<B>, Without<C>)>, Query<&mut A, With<C>>),
        case!(accept: Query<Option<&mut A>, (With<B>, Without<C>)>, Query<Option<&A>, With<C>>),
        case!(accept: Query<Option<&mut A>, (With<B>, Without<C>)>, Query<Option<&mut A>, With<C>>),
        case!(accept: Query<&A, Or<(With<B>, Without<C>)>>, Query<&A, (Without<B>, With<C>)>),
        case!(accept: Query<&A, Or<(With<B>, Without<C>)>>, Query<&mut A, (Without<B>, With<C>)>),
        case!(accept: Query<&A, Or<(With<B>, Without<C>)>>, Query<Option<&A>, (Without<B>, With<C>)>),
        case!(accept: Query<&A, Or<(With<B>, Without<C>)>>, Query<Option<&mut A>, (Without<B>, With<C>)>),
        case!(accept: Query<&mut A, Or<(With<B>, Without<C>)>>, Query<&A, (Without<B>, With<C>)>),
        case!(accept: Query<&mut A, Or<(With<B>, Without<C>)>>, Query<&mut A, (Without<B>, With<C>)>),
        case!(accept: Query<&mut A, Or<(With<B>, Without<C>)>>, Query<Option<&A>, (Without<B>, With<C>)>),
        case!(accept: Query<&mut A, Or<(With<B>, Without<C>)>>, Query<Option<&mut A>, (Without<B>, With<C>)>),
        case!(accept: Query<Option<&A>, Or<(With<B>, Without<C>)>>, Query<&A, (Without<B>, With<C>)>),
        case!(accept: Query<Option<&A>, Or<(With<B>, Without<C>)>>, Query<&mut A, (Without<B>, With<C>)>),
        case!(accept: Query<Option<&A>, Or<(With<B>, Without<C>)>>, Query<Option<&A>, (Without<B>, With<C>)>),
        case!(accept: Query<Option<&A>, Or<(With<B>, Without<C>)>>, Query<Option<&mut A>, (Without<B>, With<C>)>),
        case!(accept: Query<Option<&mut A>, Or<(With<B>, Without<C>)>>, Query<&A, (Without<B>, With<C>)>),
        case!(accept: Query<Option<&mut A>, Or<(With<B>, Without<C>)>>, Query<&mut A, (Without<B>, With<C>)>),
        case!(accept: Query<Option<&mut A>, Or<(With<B>, Without<C>)>>, Query<Option<&A>, (Without<B>, With<C>)>),
        case!(accept: Query<Option<&mut A>, Or<(With<B>, Without<C>)>>, Query<Option<&mut A>, (Without<B>, With<C>)>),
        case!(accept: Query<&A, Or<(With<B>, Without<C>)>>, Query<&A, Without<B>>),
        case!(reject: Query<&A, Or<(With<B>, Without<C>)>>, Query<&mut A, Without<B>>),
        case!(accept: Query<&A, Or<(With<B>, Without<C>)>>, Query<Option<&A>, Without<B>>),
        case!(reject: Query<&A, Or<(With<B>, Without<C>)>>, Query<Option<&mut A>, Without<B>>),
        case!(reject: Query<&mut A, Or<(With<B>, Without<C>)>>, Query<&A, Without<B>>),
        case!(reject: Query<&mut A, Or<(With<B>, Without<C>)>>, Query<&mut A, Without<B>>),
        case!(reject: Query<&mut A, Or<(With<B>, Without<C>)>>, Query<Option<&A>, Without<B>>),
        case!(reject: Query<&mut A, Or<(With<B>, Without<C>)>>, Query<Option<&mut A>, Without<B>>),
        case!(accept: Query<Option<&A>, Or<(With<B>, Without<C>)>>, Query<&A, Without<B>>),
        case!(reject: Query<Option<&A>, Or<(With<B>, Without<C>)>>, Query<&mut A, Without<B>>),
        case!(accept: Query<Option<&A>, Or<(With<B>, Without<C>)>>, Query<Option<&A>, Without<B>>),
        case!(reject: Query<Option<&A>, Or<(With<B>, Without<C>)>>, Query<Option<&mut A>, Without<B>>),
        case!(reject: Query<Option<&mut A>, Or<(With<B>, Without<C>)>>, Query<&A, Without<B>>),
        case!(reject: Query<Option<&mut A>, Or<(With<B>, Without<C>)>>, Query<&mut A, Without<B>>),
        case!(reject: Query<Option<&mut A>, Or<(With<B>, Without<C>)>>, Query<Option<&A>, Without<B>>),
        case!(reject: Query<Option<&mut A>, Or<(With<B>, Without<C>)>>, Query<Option<&mut A>, Without<B>>),
    ];
    assert_eq!(cases.len(), 144);
    check(cases, "component `A`");
}

#[test]
fn queries_made_disjoint_by_their_own_data() {
    let cases = vec![
        case!(accept: Query<(&mut A, &B)>, Query<&A, Without<B>>),
        case!(reject: Query<(&mut A, &mut B)>, Query<(&A, &B), Without<C>>),
        case!(accept: Query<(&mut A, &mut B), With<C>>, Query<(&A, &B), Without<C>>),
        case!(reject: Query<(&mut A, &B)>, Query<&A, Without<C>>),
        case!(accept: Query<(Entity, &mut A)>, Query<Entity>),
        case!(accept: Query<&mut A>, Query<&B>),
        case!(reject: Query<(&mut A, &mut B)>, Query<&B>),
        case!(accept: Query<&mut A, Without<A>>, Query<&A>),
        case!(accept: Query<Option<&mut A>, With<B>>, Query<(&A, Option<&C>), Without<B>>),
    ];
    check(cases, "component `");
}

#[test]
fn resources() {
    let cases = vec![
        case!(accept: Res<R>, Res<R>),
        case!(reject: ResMut<R>, Res<R>),
        case!(reject: ResMut<R>, ResMut<R>),
        case!(reject: Option<Res<R>>, ResMut<R>),
        case!(reject: Option<ResMut<R>>, Option<Res<R>>),
        case!(accept: ResMut<R>, Res<S>),
        case!(accept: ResMut<R>, Option<ResMut<S>>),
        case!(accept: Option<Res<R>>, Res<R>),
    ];
    check(cases, "resource `");
}

#[test]
fn events() {
    let cases = vec![
        case!(accept: EventReader<E>, EventReader<E>),
        case!(reject: EventWriter<E>, EventReader<E>),
        case!(reject: EventWriter<E>, EventWriter<E>),
        case!(reject: EventWriter<E>, Res<Events<E>>),
        case!(accept: EventWriter<E>, EventReader<u32>),
    ];
    check(cases, "resource `Events<E>`");
}

#[test]
fn parameters_that_borrow_nothing_never_conflict() {
    let cases = vec![
        case!(accept: Commands, Commands),
        case!(accept: Local<u32>, Local<u32>),
        case!(accept: Commands, Query<&mut A>),
        case!(accept: Local<R>, ResMut<R>),
        case!(accept: Query<&mut A>, ResMut<R>),
    ];
    check(cases, "");
}

#[test]
fn conflicts_inside_tuples_are_found() {
    let cases = vec![
        case!(reject: (Query<&mut A>, Res<R>), Query<&A>),
        case!(reject: (Res<R>, (Local<u32>, ResMut<R>)), Commands),
        case!(accept: (Query<&mut A, With<B>>, Res<R>), (Query<&A, Without<B>>, Res<R>)),
    ];
    check(cases, "");
}

#[test]
fn the_refusal_names_system_parameters_and_component() {
    fn heal(_: Query<&mut A>, _: Query<(&A, &B)>) {}
    let error = Schedule::new().try_add_system(heal).map(|_| ()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "error[E0002]: system `heal` cannot run: parameter #0 `Query<&mut A>` writes component `A` while parameter #1 \
         `Query<(&A, &B)>` also borrows it; make the two queries disjoint with `With`/`Without` filters, merge them \
         into one parameter, or split the system"
    );
}

#[test]
#[should_panic(expected = "error[E0002]: system `greedy` cannot run: parameter #1 `ResMut<R>` writes resource `R`")]
fn add_system_panics_on_a_conflict() {
    fn greedy(_: Res<R>, _: ResMut<R>) {}
    Schedule::new().add_system(greedy);
}
