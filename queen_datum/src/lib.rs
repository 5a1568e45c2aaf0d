//! JSON at the SQL boundary of the queen extensions, without building
//! value trees.
//!
//! Arguments arrive as `jsonb` ([`JsonbArg`]: its text, parsed lazily with
//! borrowed raw values) and answers leave as `json` ([`JsonOut`]: text written
//! once, never re-parsed into jsonb). A push or pop answer of a thousand
//! messages is then one serialization, not a tree built, printed and parsed
//! again.

pub mod errors;
pub mod limits;
pub mod memory;
pub mod rights;

use pgrx::callconv::{Arg, ArgAbi, BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::pg_sys;
use pgrx::pgrx_sql_entity_graph::metadata::{
    ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable, TypeOrigin,
};
use pgrx::{direct_function_call, FromDatum, IntoDatum};

/// A `jsonb` argument as its JSON text.
pub struct JsonbArg(pub String);

impl FromDatum for JsonbArg {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _: pg_sys::Oid,
    ) -> Option<Self> {
        if is_null {
            return None;
        }
        unsafe {
            let varlena = datum.cast_mut_ptr();
            let detoasted = pg_sys::pg_detoast_datum_packed(varlena);
            let cstr = direct_function_call::<&core::ffi::CStr>(
                pg_sys::jsonb_out,
                &[Some(detoasted.into())],
            )
            .expect("a jsonb datum prints");
            let text = cstr.to_str().expect("jsonb prints UTF-8").to_owned();
            pg_sys::pfree(cstr.as_ptr() as *mut std::ffi::c_void);
            if detoasted != varlena {
                pg_sys::pfree(detoasted as *mut std::ffi::c_void);
            }
            Some(JsonbArg(text))
        }
    }
}

unsafe impl<'fcx> ArgAbi<'fcx> for JsonbArg {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        let index = arg.index();
        unsafe {
            arg.unbox_arg_using_from_datum()
                .unwrap_or_else(|| panic!("argument {index} must not be null"))
        }
    }
}

unsafe impl SqlTranslatable for JsonbArg {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(JsonbArg);
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("jsonb"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("jsonb")));
}

/// A `json` answer, already serialized.
pub struct JsonOut(pub String);

impl JsonOut {
    pub fn of<T: serde::Serialize>(value: &T) -> JsonOut {
        JsonOut(serde_json::to_string(value).expect("answers serialize"))
    }
}

impl IntoDatum for JsonOut {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        // json is stored as its text.
        self.0.as_str().into_datum()
    }
    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONOID
    }
}

unsafe impl BoxRet for JsonOut {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        match self.into_datum() {
            Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
            None => fcinfo.return_null(),
        }
    }
}

unsafe impl SqlTranslatable for JsonOut {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(JsonOut);
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("json"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
        Ok(ReturnsRef::One(SqlMappingRef::literal("json")));
}
