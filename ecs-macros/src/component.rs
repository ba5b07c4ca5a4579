//! `#[derive(Component)]` and its `#[component(..)]` options.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, Error, Result};

/// The options of `#[component(..)]`.
#[derive(Default)]
struct Options {
    /// `track_changes`: keep added and changed ticks per value.
    track_changes: bool,
    /// `pooled`: reset values that leave the world and keep them for reuse.
    pooled: bool,
    /// `clone`: values can be copied (`World::clone_entity`,
    /// `World::try_clone`); the type implements `Clone`.
    clone: bool,
    /// `relationship(target = T)`: the component names one entity, whose
    /// `T` lists the sources.
    relationship: Option<syn::Type>,
    /// `relationship_target(source = S, despawn_sources)`: the component
    /// lists the entities whose `S` names its entity.
    relationship_target: Option<(syn::Type, bool)>,
    /// `requires(A, B = expr)`: the components spawned with this one, each
    /// from its `Default` or the expression given.
    requires: Option<Vec<Required>>,
    /// `storage = "sparse"` (or `"table"`, the default): where the values live.
    sparse: Option<bool>,
    /// `immutable`: no `&mut` to a value through any safe path; only an
    /// insert replaces it.
    immutable: bool,
}

/// One entry of `requires(..)`: a type, and the expression that builds it
/// if one is given.
struct Required {
    ty: syn::Type,
    value: Option<syn::Expr>,
}

impl syn::parse::Parse for Required {
    fn parse(input: syn::parse::ParseStream) -> Result<Self> {
        let ty = input.parse()?;
        let value = if input.peek(syn::Token![=]) {
            input.parse::<syn::Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Required { ty, value })
    }
}

const UNKNOWN: &str =
    "unknown `component` option; expected `track_changes`, `pooled`, `clone`, `immutable`, `requires(..)`, \
                       `storage = \"sparse\"`, `relationship(target = ..)` or \
                       `relationship_target(source = .., despawn_sources)`";

fn options(input: &DeriveInput) -> Result<Options> {
    let mut options = Options::default();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("component")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("requires") {
                if options.requires.is_some() {
                    return Err(meta.error("this `component` option is given twice"));
                }
                let content;
                syn::parenthesized!(content in meta.input);
                let list = syn::punctuated::Punctuated::<Required, syn::Token![,]>::parse_terminated(&content)?;
                if list.is_empty() {
                    return Err(meta.error("`requires` needs at least one component: `requires(Transform, ..)`"));
                }
                options.requires = Some(list.into_iter().collect());
                return Ok(());
            }
            if meta.path.is_ident("storage") {
                if options.sparse.is_some() {
                    return Err(meta.error("this `component` option is given twice"));
                }
                let kind: syn::LitStr = meta.value()?.parse()?;
                // bevy_ecs's spellings too, so a type moved over keeps its
                // attribute.
                options.sparse = Some(match kind.value().as_str() {
                    "sparse" | "SparseSet" => true,
                    "table" | "Table" => false,
                    _ => {
                        return Err(Error::new_spanned(
                            kind,
                            "expected `storage = \"table\"` or `storage = \"sparse\"`",
                        ))
                    }
                });
                return Ok(());
            }
            if meta.path.is_ident("relationship") {
                if options.relationship.is_some() {
                    return Err(meta.error("this `component` option is given twice"));
                }
                let mut target = None;
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("target") {
                        target = Some(inner.value()?.parse::<syn::Type>()?);
                        Ok(())
                    } else {
                        Err(inner.error("expected `target = ListComponent`"))
                    }
                })?;
                options.relationship =
                    Some(target.ok_or_else(|| meta.error("`relationship` needs `target = ListComponent`"))?);
                return Ok(());
            }
            if meta.path.is_ident("relationship_target") {
                if options.relationship_target.is_some() {
                    return Err(meta.error("this `component` option is given twice"));
                }
                let (mut source, mut despawn) = (None, false);
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("source") {
                        source = Some(inner.value()?.parse::<syn::Type>()?);
                        Ok(())
                    } else if inner.path.is_ident("despawn_sources") {
                        despawn = true;
                        Ok(())
                    } else {
                        Err(inner.error("expected `source = RelationshipComponent` or `despawn_sources`"))
                    }
                })?;
                let source =
                    source.ok_or_else(|| meta.error("`relationship_target` needs `source = RelationshipComponent`"))?;
                options.relationship_target = Some((source, despawn));
                return Ok(());
            }
            let flag = if meta.path.is_ident("track_changes") {
                &mut options.track_changes
            } else if meta.path.is_ident("pooled") {
                &mut options.pooled
            } else if meta.path.is_ident("clone") {
                &mut options.clone
            } else if meta.path.is_ident("immutable") {
                &mut options.immutable
            } else {
                return Err(meta.error(UNKNOWN));
            };
            if *flag {
                return Err(meta.error("this `component` option is given twice"));
            }
            *flag = true;
            Ok(())
        })?;
    }
    Ok(options)
}

pub fn derive(input: DeriveInput) -> Result<TokenStream> {
    if let Some(lifetime) = input.generics.lifetimes().next() {
        return Err(Error::new_spanned(
            lifetime,
            format!(
                "`derive(Component)` needs a `'static` type, but `{}` borrows data for lifetime `{}`; \
                 components are owned by the world, so store owned data (or an `Entity` handle) instead",
                input.ident, lifetime.lifetime
            ),
        ));
    }
    let options = options(&input)?;
    let engine = crate::path::engine();
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause.cloned().unwrap_or_else(|| syn::parse_quote!(where));
    // For a generic type, state the requirement where it applies; for a
    // concrete one, the trait's own supertraits give the clearer error.
    if input.generics.type_params().next().is_some() {
        where_clause.predicates.push(syn::parse_quote!(Self: ::core::marker::Send + ::core::marker::Sync + 'static));
    }
    let track = options.track_changes.then(|| {
        quote!(
            const TRACK_CHANGES: bool = true;
        )
    });
    let pool = options.pooled.then(|| {
        quote!(
            const POOL: ::core::option::Option<#engine::__private::PoolFns<Self>> =
                ::core::option::Option::Some(#engine::__private::PoolFns::<Self>::of());
        )
    });
    let clone = options.clone.then(|| {
        quote!(
            const CLONE: ::core::option::Option<fn(&Self) -> Self> =
                ::core::option::Option::Some(<Self as ::core::clone::Clone>::clone);
        )
    });
    let storage = (options.sparse == Some(true)).then(|| {
        quote!(
            const STORAGE: #engine::StorageType = #engine::StorageType::Sparse;
        )
    });
    let relation = relationship(&input, &options, &engine)?;
    let engine_hooks = match (&options.relationship, &options.relationship_target) {
        (Some(_), Some(_)) => {
            return Err(Error::new_spanned(
                &input.ident,
                "a component is either a `relationship` or a `relationship_target`, not both",
            ))
        }
        (Some(_), None) => Some(quote!(#engine::__private::install_relationship::<Self>)),
        (None, Some(_)) => Some(quote!(#engine::__private::install_target::<Self>)),
        (None, None) => None,
    };
    let engine_hooks = engine_hooks.map(|install| {
        quote!(
            const ENGINE_HOOKS: ::core::option::Option<fn(&mut #engine::World)> = ::core::option::Option::Some(#install);
        )
    });
    let engine_kept = options.relationship_target.is_some().then(|| {
        quote!(
            const ENGINE_KEPT: bool = true;
        )
    });
    let requires = options.requires.as_ref().map(|list| {
        let adds = list.iter().map(|Required { ty, value }| {
            let value = match value {
                Some(value) => quote::quote_spanned!(syn::spanned::Spanned::span(value)=> #value),
                None => quote::quote_spanned!(syn::spanned::Spanned::span(ty)=> <#ty as ::core::default::Default>::default()),
            };
            quote!(requires.add::<#ty>(|| #value);)
        });
        quote!(
            const REQUIRES: ::core::option::Option<fn(&mut #engine::Requires)> =
                ::core::option::Option::Some(|requires: &mut #engine::Requires| {
                    #(#adds)*
                });
        )
    });
    let tracked = options.track_changes.then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #engine::Tracked for #name #ty_generics #where_clause {}
        }
    });
    // A relationship and its list are kept by the engine's hooks: never
    // mutable, so that every change goes through an insert.
    let mutable =
        (!options.immutable && options.relationship.is_none() && options.relationship_target.is_none()).then(|| {
            quote! {
                #[automatically_derived]
                impl #impl_generics #engine::MutableComponent for #name #ty_generics #where_clause {}
            }
        });
    Ok(quote! {
        #mutable
        #[automatically_derived]
        impl #impl_generics #engine::Component for #name #ty_generics #where_clause {
            #track
            #pool
            #clone
            #engine_hooks
            #engine_kept
            #requires
            #storage
        }
        #tracked
        #relation
    })
}

/// The `Relationship` or `RelationshipTarget` impl the options ask for: the
/// struct's one field is the target entity, or the list of sources.
fn relationship(input: &DeriveInput, options: &Options, engine: &TokenStream) -> Result<Option<TokenStream>> {
    if options.relationship.is_none() && options.relationship_target.is_none() {
        return Ok(None);
    }
    let name = &input.ident;
    if input.generics.params.iter().next().is_some() {
        return Err(Error::new_spanned(&input.generics, "a relationship component cannot be generic"));
    }
    let syn::Data::Struct(data) = &input.data else {
        return Err(Error::new_spanned(name, "a relationship component is a struct with one field"));
    };
    let mut fields = data.fields.iter();
    let (Some(field), None) = (fields.next(), fields.next()) else {
        return Err(Error::new_spanned(
            name,
            "a relationship component has exactly one field: the target `Entity`, or the `SourceList` of sources",
        ));
    };
    let (access, build) = match &field.ident {
        Some(ident) => (quote!(#ident), quote!(Self { #ident: value })),
        None => (quote!(0), quote!(Self(value))),
    };
    Ok(Some(match (&options.relationship, &options.relationship_target) {
        (Some(target), _) => quote! {
            #[automatically_derived]
            impl #engine::Relationship for #name {
                type Target = #target;
                fn target(&self) -> #engine::Entity {
                    self.#access
                }
                fn from_target(value: #engine::Entity) -> Self {
                    #build
                }
            }
        },
        (None, Some((source, despawn))) => quote! {
            #[automatically_derived]
            impl #engine::RelationshipTarget for #name {
                type Relationship = #source;
                const DESPAWN_SOURCES: bool = #despawn;
                fn sources(&self) -> &#engine::SourceList {
                    &self.#access
                }
                fn sources_mut(&mut self, _: #engine::__private::EngineAccess) -> &mut #engine::SourceList {
                    &mut self.#access
                }
                fn from_sources(value: #engine::SourceList, _: #engine::__private::EngineAccess) -> Self {
                    #build
                }
            }
        },
        (None, None) => unreachable!("checked above"),
    }))
}
