//! `#[derive(Equivalence)]`: makes a Rust struct sendable with the oxmpi Rust API by
//! describing its memory as an MPI struct datatype.
//!
//! For a struct whose fields all implement `oxmpi::datatype::Equivalence`, the derive
//! implements that (unsafe) trait: the datatype is a struct type with one block per field,
//! at the field's offset (`core::mem::offset_of!`), of the field's own datatype repeated its
//! multiplicity, resized to lower bound 0 and extent `size_of::<Self>()`, committed once
//! and cached for the life of the process. Padding bytes are never part of the type map.
//! `repair` runs the fields' repairs (e.g. of `bool` fields) after a receive.
//!
//! Named, tuple and unit structs, generic or not, `#[repr(Rust)]`, `C` or `packed`, are
//! accepted; enums and unions are not (a received byte pattern could be an invalid
//! discriminant). Deriving promises, like writing the impl by hand, that any combination
//! of valid field values is a valid value of the struct: a struct whose fields must obey
//! an invariant should not derive `Equivalence`.
//!
//! # The contract with the `oxmpi` crate
//!
//! The generated code names only these items, which `oxmpi` provides:
//!
//! ```text
//! ::oxmpi::datatype::Equivalence                       (unsafe trait, as today)
//! ::oxmpi::datatype::DatatypeRef                       (Copy; as today)
//! ::oxmpi::datatype::derive::Field { offset: usize, datatype: DatatypeRef }
//! ::oxmpi::datatype::derive::struct_datatype(size: usize, fields: &[Field]) -> DatatypeRef
//! ::oxmpi::datatype::derive::cached::<T: 'static>(build: impl FnOnce() -> DatatypeRef) -> DatatypeRef
//! ```
//!
//! `struct_datatype` builds and commits the engine type (one block of
//! `datatype.multiplicity()` elements of `datatype.type_id()` per field) with
//! `oxmpi_core::types::rust_struct(size, ...)`, and returns it with multiplicity 1;
//! it panics with a clear message when MPI is not initialized. `cached` keeps one value
//! per `TypeId` (generic structs: a `static` in a generic function is shared by every
//! instantiation, so they cannot use the `OnceLock` non-generic structs use). `build`
//! computes the fields' datatypes, which may call `cached` again for a nested generic
//! struct: `cached` must not hold its lock while `build` runs (look up, unlock, build,
//! then insert unless another thread was first, keeping the first value).

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, ToTokens};
use syn::{parse_macro_input, Data, DeriveInput, Fields, Index, Member};

/// Derives `oxmpi::datatype::Equivalence` for a struct of `Equivalence` fields.
#[proc_macro_derive(Equivalence)]
pub fn derive_equivalence(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The impl for `input`, or the error to report.
fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let fields =
        match &input.data {
            Data::Struct(s) => &s.fields,
            Data::Enum(_) => return Err(syn::Error::new(
                input.ident.span(),
                "#[derive(Equivalence)] supports structs only: a received value of an enum could \
                 hold an invalid discriminant",
            )),
            Data::Union(_) => {
                return Err(syn::Error::new(
                    input.ident.span(),
                    "#[derive(Equivalence)] supports structs only, not unions",
                ))
            }
        };
    let members: Vec<Member> = match fields {
        Fields::Named(f) => f
            .named
            .iter()
            .map(|f| Member::Named(f.ident.clone().expect("named field")))
            .collect(),
        Fields::Unnamed(f) => (0..f.unnamed.len())
            .map(|i| {
                Member::Unnamed(Index {
                    index: i as u32,
                    span: Span::call_site(),
                })
            })
            .collect(),
        Fields::Unit => Vec::new(),
    };
    let types: Vec<&syn::Type> = fields.iter().map(|f| &f.ty).collect();
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut bounds: Vec<TokenStream2> = where_clause
        .map(|w| w.predicates.iter().map(|p| p.to_token_stream()).collect())
        .unwrap_or_default();
    for t in &types {
        bounds.push(quote!(#t: ::oxmpi::datatype::Equivalence));
    }
    let generic = !input.generics.params.is_empty();
    if generic {
        bounds.push(quote!(Self: 'static));
    }

    let eq = quote!(::oxmpi::datatype::Equivalence);
    let build = quote! {
        let build = || -> ::oxmpi::datatype::DatatypeRef {
            ::oxmpi::datatype::derive::struct_datatype(
                ::core::mem::size_of::<#name #ty_generics>(),
                &[#(
                    ::oxmpi::datatype::derive::Field {
                        offset: ::core::mem::offset_of!(#name #ty_generics, #members),
                        datatype: <#types as #eq>::equivalent_datatype(),
                    },
                )*],
            )
        };
    };
    let body = if generic {
        quote! {
            #build
            ::oxmpi::datatype::derive::cached::<Self>(build)
        }
    } else {
        quote! {
            #build
            static DATATYPE: ::std::sync::OnceLock<::oxmpi::datatype::DatatypeRef> =
                ::std::sync::OnceLock::new();
            *DATATYPE.get_or_init(build)
        }
    };
    Ok(quote! {
        // SAFETY: the datatype has one block per field, at the field's offset, described by
        // the field's own `Equivalence` datatype (exact by that impl's contract), and is
        // resized to lower bound 0 and extent `size_of::<Self>()`; padding is outside every
        // block. The fields hold no pointers or interior mutability (their impls promise
        // it), and a struct of valid field values is valid: after a receive, `repair` makes
        // each field valid again.
        unsafe impl #impl_generics #eq for #name #ty_generics where #(#bounds,)* {
            fn equivalent_datatype() -> ::oxmpi::datatype::DatatypeRef {
                #body
            }

            const NEEDS_REPAIR: bool = false #(|| <#types as #eq>::NEEDS_REPAIR)*;

            unsafe fn repair(elements: *mut Self, count: usize) {
                if !<Self as #eq>::NEEDS_REPAIR {
                    return;
                }
                for i in 0..count {
                    // SAFETY: the caller guarantees `count` values at `elements`, readable
                    // and writable, with no references to them; each field is repaired
                    // through a raw pointer to it (no reference to a possibly invalid
                    // value, no alignment assumption for packed structs).
                    unsafe {
                        let value = elements.add(i);
                        #(
                            <#types as #eq>::repair(::core::ptr::addr_of_mut!((*value).#members), 1);
                        )*
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(src: &str) -> Result<String, String> {
        let input: DeriveInput = syn::parse_str(src).map_err(|e| e.to_string())?;
        expand(&input)
            .map(|t| t.to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn enums_and_unions_are_rejected() {
        let e = expand_str("enum E { A, B }").unwrap_err();
        assert!(e.contains("structs only"), "{e}");
        let e = expand_str("union U { a: u32, b: f32 }").unwrap_err();
        assert!(e.contains("not unions"), "{e}");
    }

    #[test]
    fn non_generic_structs_cache_in_a_static() {
        let out = expand_str("struct P { a: i32, b: [f64; 3] }").unwrap();
        assert!(out.contains("OnceLock"), "{out}");
        assert!(out.contains("offset_of ! (P , a)"), "{out}");
        assert!(!out.contains("cached"), "{out}");
    }

    #[test]
    fn generic_structs_cache_by_type_id() {
        let out = expand_str("struct W<T: Copy> where T: Default { x: T, n: u8 }").unwrap();
        assert!(out.contains("cached :: < Self >"), "{out}");
        assert!(out.contains("Self : 'static"), "{out}");
        assert!(out.contains("T : Default"), "{out}");
        assert!(out.contains("offset_of ! (W < T > , x)"), "{out}");
    }

    #[test]
    fn tuple_and_unit_structs() {
        let out = expand_str("struct T(u8, u16);").unwrap();
        assert!(out.contains("offset_of ! (T , 1)"), "{out}");
        assert!(expand_str("struct U;").is_ok());
    }
}
