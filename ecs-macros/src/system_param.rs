//! `#[derive(SystemParam)]`: a struct whose fields are system parameters is
//! one too, so systems can take a group of parameters as one argument. Its
//! two lifetime parameters are the world's and the state's, in that order.
//!
//! The impl's `State` is a tuple struct of the fields' states declared with
//! the struct's own visibility, not a plain tuple: a `pub` struct may name
//! types less visible than itself, and those must not appear in the
//! associated types of its public impl (E0446).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;
use syn::{Data, DeriveInput, Error, Fields, GenericParam, Index, Lifetime, Member, Result, Type};

/// Replaces the struct's world and state lifetimes in a field type.
struct Relifetime<'a> {
    world: &'a Lifetime,
    state: &'a Lifetime,
    new_world: Lifetime,
    new_state: Lifetime,
}

impl VisitMut for Relifetime<'_> {
    fn visit_lifetime_mut(&mut self, lifetime: &mut Lifetime) {
        if lifetime.ident == self.world.ident {
            *lifetime = self.new_world.clone();
        } else if lifetime.ident == self.state.ident {
            *lifetime = self.new_state.clone();
        }
    }
}

fn relifetime(ty: &Type, world: &Lifetime, state: &Lifetime, new_world: &str, new_state: &str) -> Type {
    let mut ty = ty.clone();
    Relifetime {
        world,
        state,
        new_world: Lifetime::new(new_world, Span::call_site()),
        new_state: Lifetime::new(new_state, Span::call_site()),
    }
    .visit_type_mut(&mut ty);
    ty
}

pub fn derive(input: DeriveInput) -> Result<TokenStream> {
    let name = &input.ident;
    let vis = &input.vis;
    let fields = match &input.data {
        Data::Struct(data) => &data.fields,
        _ => {
            return Err(Error::new_spanned(
                name,
                "`derive(SystemParam)` needs a struct whose fields are system parameters",
            ))
        }
    };
    let mut lifetimes = Vec::new();
    for param in &input.generics.params {
        match param {
            GenericParam::Lifetime(def) => lifetimes.push(def.lifetime.clone()),
            other => {
                return Err(Error::new_spanned(
                    other,
                    "`derive(SystemParam)` supports only the two lifetime parameters `<'w, 's>`",
                ))
            }
        }
    }
    let [world_lt, state_lt] = lifetimes.as_slice() else {
        return Err(Error::new_spanned(
            &input.generics,
            format!(
                "`derive(SystemParam)` needs two lifetime parameters, the world's and the state's: \
                 `struct {name}<'w, 's> {{ .. }}` (pass them on as `Query<'w, 's, ..>`, `Res<'w, T>`, `Local<'s, T>`)"
            ),
        ));
    };
    if let Some(clause) = &input.generics.where_clause {
        return Err(Error::new_spanned(clause, "`derive(SystemParam)` does not support where clauses"));
    }

    let engine = crate::path::engine();
    let param = quote!(#engine::system::SystemParam);
    let statics: Vec<Type> =
        fields.iter().map(|f| relifetime(&f.ty, world_lt, state_lt, "'static", "'static")).collect();
    let items: Vec<Type> =
        fields.iter().map(|f| relifetime(&f.ty, world_lt, state_lt, "'__ecs_w", "'__ecs_s")).collect();
    let indices: Vec<Index> = (0..fields.len()).map(Index::from).collect();
    let bindings: Vec<_> = (0..fields.len()).map(|i| format_ident!("__ecs_state_{}", i)).collect();
    let members: Vec<Member> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| f.ident.clone().map(Member::Named).unwrap_or_else(|| Member::Unnamed(Index::from(i))))
        .collect();
    let construct = match fields {
        Fields::Unit => quote!(#name),
        _ => quote!(#name { #(#members: unsafe { <#items as #param>::get_param(#bindings, world, meta) },)* }),
    };

    Ok(quote! {
        const _: () = {
            // The fields' states, in a type as visible as the struct (see
            // the module documentation).
            #[doc(hidden)]
            #vis struct __ArchetableState(#(<#statics as #param>::State,)*);

            // SAFETY: every field records its own access in `init_state`, and
            // `get_param` builds each field through that field's own
            // `get_param`, so the struct borrows exactly what its fields do.
            #[automatically_derived]
            #[allow(unsafe_code)]
            unsafe impl<#world_lt, #state_lt> #param for #name<#world_lt, #state_lt> {
                type State = __ArchetableState;
                type Item<'__ecs_w, '__ecs_s> = #name<'__ecs_w, '__ecs_s>;

                fn init_state(
                    world: &mut #engine::World,
                    meta: &mut #engine::system::SystemMeta,
                ) -> ::core::result::Result<Self::State, #engine::system::AccessConflict> {
                    ::core::result::Result::Ok(__ArchetableState(#(<#statics as #param>::init_state(world, meta)?,)*))
                }

                #[allow(clippy::unused_unit, unused_variables)]
                unsafe fn get_param<'__ecs_w, '__ecs_s>(
                    state: &'__ecs_s mut Self::State,
                    world: &'__ecs_w #engine::World,
                    meta: &'__ecs_s #engine::system::SystemMeta,
                ) -> Self::Item<'__ecs_w, '__ecs_s> {
                    let __ArchetableState(#(#bindings,)*) = state;
                    // SAFETY (each field): the caller's promise for the
                    // struct covers every field's access.
                    #construct
                }

                #[allow(unused_variables)]
                unsafe fn validate_param(
                    state: &mut Self::State,
                    world: &#engine::World,
                    meta: &#engine::system::SystemMeta,
                ) -> ::core::result::Result<(), #engine::system::SkippedSystem> {
                    // SAFETY (each field): the caller's promise for the
                    // struct covers every field's access.
                    #(unsafe { <#statics as #param>::validate_param(&mut state.#indices, world, meta) }?;)*
                    ::core::result::Result::Ok(())
                }

                #[allow(unused_variables)]
                fn apply_deferred(
                    state: &mut Self::State,
                    world: &mut #engine::World,
                    meta: &#engine::system::SystemMeta,
                    report: &mut #engine::system::CommandReport,
                ) {
                    #(<#statics as #param>::apply_deferred(&mut state.#indices, world, meta, report);)*
                }

                #[allow(unused_variables)]
                fn discard_deferred(state: &mut Self::State) {
                    #(<#statics as #param>::discard_deferred(&mut state.#indices);)*
                }

                #[allow(unused_variables)]
                fn move_deferred(state: &mut Self::State, queue: &mut #engine::CommandQueue) {
                    #(<#statics as #param>::move_deferred(&mut state.#indices, queue);)*
                }
            }
        };
    })
}
