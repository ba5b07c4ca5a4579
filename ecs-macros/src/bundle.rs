//! `#[derive(Bundle)]`: every field is a bundle (a component, a tuple, or
//! another derived bundle); the struct's component order is its fields' in
//! declaration order.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Error, Index, Member, Result};

pub fn derive(input: DeriveInput) -> Result<TokenStream> {
    let fields = match &input.data {
        Data::Struct(data) => &data.fields,
        Data::Enum(data) => {
            return Err(Error::new(
                data.enum_token.span,
                format!(
                "`derive(Bundle)` needs a struct, but `{}` is an enum: a bundle always holds all of its components; \
                     spawn each variant's components separately, or store the enum as one component",
                input.ident
            ),
            ))
        }
        Data::Union(data) => {
            return Err(Error::new(
                data.union_token.span,
                format!("`derive(Bundle)` needs a struct, but `{}` is a union", input.ident),
            ))
        }
    };
    if let Some(attr) = input.attrs.iter().find(|a| a.path().is_ident("repr") && is_packed(a)) {
        return Err(Error::new_spanned(
            attr,
            format!(
                "`derive(Bundle)` does not support `repr(packed)`: the world moves components out of `{}` \
                 through pointers to its fields, which must be aligned",
                input.ident
            ),
        ));
    }
    let engine = crate::path::engine();
    let name = &input.ident;
    let members: Vec<Member> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| match &f.ident {
            Some(ident) => Member::Named(ident.clone()),
            None => Member::Unnamed(Index::from(i)),
        })
        .collect();
    let types: Vec<_> = fields.iter().map(|f| &f.ty).collect();
    let bindings: Vec<_> = (0..members.len()).map(|i| format_ident!("__field{i}")).collect();
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause.cloned().unwrap_or_else(|| syn::parse_quote!(where));
    for ty in &types {
        where_clause.predicates.push(syn::parse_quote!(#ty: #engine::Bundle));
    }
    // For a generic type, state the requirement where it applies; for a
    // concrete one, the trait's own supertraits give the clearer error.
    if input.generics.type_params().next().is_some() {
        where_clause.predicates.push(syn::parse_quote!(Self: ::core::marker::Send + ::core::marker::Sync + 'static));
    }
    Ok(quote! {
        const _: () = {
            #[automatically_derived]
            #[allow(unsafe_code)]
            unsafe impl #impl_generics #engine::Bundle for #name #ty_generics #where_clause {
                const ENGINE_HOOKED: bool = false #(|| <#types as #engine::Bundle>::ENGINE_HOOKED)*;

                fn register_components(
                    components: &mut #engine::storage::Components,
                    ids: &mut impl ::core::ops::FnMut(#engine::ComponentId),
                ) {
                    #(<#types as #engine::Bundle>::register_components(components, ids);)*
                }

                #[inline(always)]
                fn write_components(self, writer: &mut impl #engine::storage::ComponentWriter) {
                    let Self { #(#members: #bindings,)* } = self;
                    #(<#types as #engine::Bundle>::write_components(#bindings, writer);)*
                }

                unsafe fn get_components(this: *mut Self, f: &mut impl ::core::ops::FnMut(*mut u8)) {
                    #(unsafe { <#types as #engine::Bundle>::get_components(&raw mut (*this).#members, f) };)*
                }

                #[inline(always)]
                fn read_components(reader: &mut impl #engine::storage::ComponentReader) -> Self {
                    Self {
                        #(#members: <#types as #engine::Bundle>::read_components(reader),)*
                    }
                }
            }
        };
    })
}

/// Whether a `#[repr(..)]` attribute asks for `packed` (with or without an
/// alignment).
fn is_packed(attr: &syn::Attribute) -> bool {
    let mut packed = false;
    let _ = attr.parse_nested_meta(|meta| {
        packed |= meta.path.is_ident("packed");
        if meta.input.peek(syn::token::Paren) {
            let _content;
            syn::parenthesized!(_content in meta.input);
        }
        Ok(())
    });
    packed
}
