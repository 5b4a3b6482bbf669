//! Haystack values and grids as Python objects, converted here without JSON text.
//!
//! Rust to Python builds the classes of `buildwire.haystack` (`Number`, `Ref`, `DateTime`,
//! `Grid` ...) straight from `buildwire_haystack::value`; Python to Rust reads them back.
//! A decoded grid crosses as a [`HaystackGrid`] handle: its meta and columns are converted
//! at once, its rows when Python first asks for them (`Grid.rows`), and `Grid.to_pandas()`
//! / `Grid.to_arrow()` read it column by column ([`HaystackGrid::frame_columns`]) into
//! NumPy and Arrow buffers, without a Python object per cell for numbers, booleans, markers
//! and timestamps.

use std::collections::HashMap;
use std::sync::Arc;

use buildwire_haystack::codec::{Format, zinc};
use buildwire_haystack::timezone;
use buildwire_haystack::value::{
    Column, Coord, Date, DateTime, Dict, Grid, Number, Ref, Time, Value, XStr,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};

/// The Python classes and singletons the conversions build and recognise.
struct Classes {
    marker: Py<PyAny>,
    na: Py<PyAny>,
    remove: Py<PyAny>,
    number: Py<PyAny>,
    reference: Py<PyAny>,
    uri: Py<PyAny>,
    symbol: Py<PyAny>,
    coord: Py<PyAny>,
    xstr: Py<PyAny>,
    datetime: Py<PyAny>,
    grid: Py<PyAny>,
    py_date: Py<PyAny>,
    py_time: Py<PyAny>,
    py_datetime: Py<PyAny>,
    timezone: Py<PyAny>,
    timedelta: Py<PyAny>,
    object_new: Py<PyAny>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&'static Classes> {
    CLASSES.get_or_try_init(py, || {
        let hs = py.import("buildwire.haystack")?;
        let dt = py.import("datetime")?;
        let get = |m: &Bound<'_, PyModule>, name: &str| m.getattr(name).map(Bound::unbind);
        Ok::<Classes, PyErr>(Classes {
            marker: get(&hs, "MARKER")?,
            na: get(&hs, "NA")?,
            remove: get(&hs, "REMOVE")?,
            number: get(&hs, "Number")?,
            reference: get(&hs, "Ref")?,
            uri: get(&hs, "Uri")?,
            symbol: get(&hs, "Symbol")?,
            coord: get(&hs, "Coord")?,
            xstr: get(&hs, "XStr")?,
            datetime: get(&hs, "DateTime")?,
            grid: get(&hs, "Grid")?,
            py_date: get(&dt, "date")?,
            py_time: get(&dt, "time")?,
            py_datetime: get(&dt, "datetime")?,
            timezone: get(&dt, "timezone")?,
            timedelta: get(&dt, "timedelta")?,
            object_new: py
                .import("builtins")?
                .getattr("object")?
                .getattr("__new__")?
                .unbind(),
        })
    })
}

/// Field names, interned once per conversion.
struct Keys<'py> {
    dict: Bound<'py, PyString>,
    val: Bound<'py, PyString>,
    unit: Bound<'py, PyString>,
    id: Bound<'py, PyString>,
    dis: Bound<'py, PyString>,
    lat: Bound<'py, PyString>,
    lng: Bound<'py, PyString>,
    type_: Bound<'py, PyString>,
    tz_name: Bound<'py, PyString>,
}

impl<'py> Keys<'py> {
    fn new(py: Python<'py>) -> Self {
        let k = |s: &str| PyString::intern(py, s);
        Keys {
            dict: k("__dict__"),
            val: k("val"),
            unit: k("unit"),
            id: k("id"),
            dis: k("dis"),
            lat: k("lat"),
            lng: k("lng"),
            type_: k("type"),
            tz_name: k("tz_name"),
        }
    }
}

/// A cached Number object with its unit (the key is the value's bits).
type UnitNumber<'py> = (Option<String>, Bound<'py, PyAny>);

/// Most entries of each cache of one conversion.
const CACHE_LIMIT: usize = 1 << 16;

/// Rust values to Python objects, with the caches of one conversion: UTC offsets, strings
/// that repeat such as units and timezone names, and the immutable values that repeat in
/// building data (Numbers, Refs without a display name), which are frozen dataclasses and
/// so can be one object wherever they appear.
pub struct ToPy<'py> {
    py: Python<'py>,
    c: &'static Classes,
    k: Keys<'py>,
    zones: HashMap<i32, Bound<'py, PyAny>>,
    strings: HashMap<String, Bound<'py, PyString>>,
    numbers: HashMap<u64, Vec<UnitNumber<'py>>>,
    number_count: usize,
    refs: HashMap<String, Bound<'py, PyAny>>,
}

impl<'py> ToPy<'py> {
    pub fn new(py: Python<'py>) -> PyResult<Self> {
        Ok(ToPy {
            py,
            c: classes(py)?,
            k: Keys::new(py),
            zones: HashMap::new(),
            strings: HashMap::new(),
            numbers: HashMap::new(),
            number_count: 0,
            refs: HashMap::new(),
        })
    }

    /// A short string that repeats (unit, timezone name, tag name): one object for all.
    fn shared(&mut self, text: &str) -> Bound<'py, PyString> {
        if let Some(s) = self.strings.get(text) {
            return s.clone();
        }
        let s = PyString::new(self.py, text);
        if self.strings.len() < 4096 {
            self.strings.insert(text.to_owned(), s.clone());
        }
        s
    }

    /// An instance of a frozen dataclass made without running its `__init__` (which sets
    /// each field through `object.__setattr__`): `object.__new__` and the instance dict.
    fn frozen(
        &self,
        class: &Py<PyAny>,
        fields: &[(&Bound<'py, PyString>, Bound<'py, PyAny>)],
    ) -> PyResult<Bound<'py, PyAny>> {
        let obj = self
            .c
            .object_new
            .bind(self.py)
            .call1((class.bind(self.py),))?;
        let dict = obj.getattr(&self.k.dict)?.cast_into::<PyDict>()?;
        for (key, value) in fields {
            dict.set_item(*key, value)?;
        }
        Ok(obj)
    }

    fn zone(&mut self, offset_seconds: i32) -> PyResult<Bound<'py, PyAny>> {
        if let Some(z) = self.zones.get(&offset_seconds) {
            return Ok(z.clone());
        }
        let zone = if offset_seconds == 0 {
            self.c.timezone.bind(self.py).getattr("utc")?
        } else {
            let delta = self.c.timedelta.bind(self.py).call1((0, offset_seconds))?;
            self.c.timezone.bind(self.py).call1((delta,))?
        };
        self.zones.insert(offset_seconds, zone.clone());
        Ok(zone)
    }

    pub fn number(&mut self, n: &Number) -> PyResult<Bound<'py, PyAny>> {
        let bits = n.value.to_bits();
        if let Some(same) = self.numbers.get(&bits).and_then(|found| {
            found
                .iter()
                .find(|(unit, _)| unit.as_deref() == n.unit.as_deref())
        }) {
            return Ok(same.1.clone());
        }
        let unit = match &n.unit {
            Some(unit) => self.shared(unit).into_any(),
            None => self.py.None().into_bound(self.py),
        };
        let val = n.value.into_pyobject(self.py)?.into_any();
        let obj = self.frozen(&self.c.number, &[(&self.k.val, val), (&self.k.unit, unit)])?;
        if self.number_count < CACHE_LIMIT {
            self.number_count += 1;
            self.numbers
                .entry(bits)
                .or_default()
                .push((n.unit.clone(), obj.clone()));
        }
        Ok(obj)
    }

    fn reference(&mut self, r: &Ref) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        if r.dis.is_none()
            && let Some(same) = self.refs.get(r.id.as_str())
        {
            return Ok(same.clone());
        }
        let id = PyString::new(py, &r.id).into_any();
        let dis = match &r.dis {
            Some(dis) => PyString::new(py, dis).into_any(),
            None => py.None().into_bound(py),
        };
        let obj = self.frozen(&self.c.reference, &[(&self.k.id, id), (&self.k.dis, dis)])?;
        if r.dis.is_none() && self.refs.len() < CACHE_LIMIT {
            self.refs.insert(r.id.clone(), obj.clone());
        }
        Ok(obj)
    }

    pub fn datetime(&mut self, dt: &DateTime) -> PyResult<Bound<'py, PyAny>> {
        let zone = self.zone(dt.offset_seconds())?;
        let (d, t) = (&dt.date, &dt.time);
        let obj = self.c.datetime.bind(self.py).call1((
            d.year(),
            d.month(),
            d.day(),
            t.hour(),
            t.minute(),
            t.second(),
            t.nanos() / 1000,
            zone,
        ))?;
        if let Some(tz) = &dt.tz {
            let name = self.shared(tz);
            obj.setattr(&self.k.tz_name, name)?;
        }
        Ok(obj)
    }

    fn date(&self, d: &Date) -> PyResult<Bound<'py, PyAny>> {
        self.c
            .py_date
            .bind(self.py)
            .call1((d.year(), d.month(), d.day()))
    }

    fn time(&self, t: &Time) -> PyResult<Bound<'py, PyAny>> {
        self.c
            .py_time
            .bind(self.py)
            .call1((t.hour(), t.minute(), t.second(), t.nanos() / 1000))
    }

    fn text_value(&self, class: &Py<PyAny>, text: &str) -> PyResult<Bound<'py, PyAny>> {
        let val = PyString::new(self.py, text).into_any();
        self.frozen(class, &[(&self.k.val, val)])
    }

    /// A Haystack value as its Python object.
    pub fn value(&mut self, value: &Value) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match value {
            Value::Null => py.None().into_bound(py),
            Value::Marker => self.c.marker.bind(py).clone(),
            Value::Na => self.c.na.bind(py).clone(),
            Value::Remove => self.c.remove.bind(py).clone(),
            Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
            Value::Number(n) => self.number(n)?,
            Value::Str(s) => PyString::new(py, s).into_any(),
            Value::Uri(s) => self.text_value(&self.c.uri, s)?,
            Value::Symbol(s) => self.text_value(&self.c.symbol, s)?,
            Value::Ref(r) => self.reference(r)?,
            Value::Date(d) => self.date(d)?,
            Value::Time(t) => self.time(t)?,
            Value::DateTime(dt) => self.datetime(dt)?,
            Value::Coord(c) => {
                let lat = c.lat.into_pyobject(py)?.into_any();
                let lng = c.lng.into_pyobject(py)?.into_any();
                self.frozen(&self.c.coord, &[(&self.k.lat, lat), (&self.k.lng, lng)])?
            }
            Value::XStr(x) => {
                let type_ = self.shared(&x.type_name).into_any();
                let val = PyString::new(py, &x.value).into_any();
                self.frozen(&self.c.xstr, &[(&self.k.type_, type_), (&self.k.val, val)])?
            }
            Value::List(items) => {
                let list = PyList::empty(py);
                for item in items {
                    list.append(self.value(item)?)?;
                }
                list.into_any()
            }
            Value::Dict(dict) => self.dict(dict)?.into_any(),
            Value::Grid(grid) => self.grid(grid)?,
        })
    }

    /// A dict of tags (the `ver` of a grid's meta left out).
    pub fn dict(&mut self, dict: &Dict) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(self.py);
        for (name, value) in dict.iter() {
            let key = self.shared(name);
            out.set_item(key, self.value(value)?)?;
        }
        Ok(out)
    }

    /// The meta of a grid (without `ver`).
    pub fn meta(&mut self, meta: &Dict) -> PyResult<Bound<'py, PyDict>> {
        let out = self.dict(meta)?;
        if out.contains("ver")? {
            out.del_item("ver")?;
        }
        Ok(out)
    }

    /// `[(name, meta), ...]`.
    pub fn columns(&mut self, grid: &Grid) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(self.py);
        for column in grid.columns() {
            let name = self.shared(&column.name);
            let meta = self.dict(&column.meta)?;
            out.append(PyTuple::new(self.py, [name.into_any(), meta.into_any()])?)?;
        }
        Ok(out)
    }

    /// The rows as a list of dicts without empty cells.
    pub fn rows(&mut self, grid: &Grid) -> PyResult<Bound<'py, PyList>> {
        let names: Vec<Bound<'py, PyString>> = grid
            .columns()
            .iter()
            .map(|c| PyString::intern(self.py, &c.name))
            .collect();
        let out = PyList::empty(self.py);
        for row in grid.rows() {
            let dict = PyDict::new(self.py);
            for (column, value) in row.cells() {
                if matches!(value, Value::Null) {
                    continue;
                }
                if let Some(name) = names.get(column) {
                    dict.set_item(name, self.value(value)?)?;
                }
            }
            out.append(dict)?;
        }
        Ok(out)
    }

    /// A nested grid, built whole as a `buildwire.haystack.Grid`.
    pub fn grid(&mut self, grid: &Grid) -> PyResult<Bound<'py, PyAny>> {
        let meta = self.meta(&grid.meta)?;
        let columns = self.columns(grid)?;
        let rows = self.rows(grid)?;
        self.c.grid.bind(self.py).call1((meta, columns, rows))
    }
}

/// Python objects to Rust values.
pub struct FromPy<'py> {
    py: Python<'py>,
    c: &'static Classes,
    k: Keys<'py>,
}

fn type_error(obj: &Bound<'_, PyAny>) -> PyErr {
    let name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "this object".to_owned());
    PyTypeError::new_err(format!("{name} is not a Haystack value"))
}

fn bad(what: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(what.to_string())
}

impl<'py> FromPy<'py> {
    pub fn new(py: Python<'py>) -> PyResult<Self> {
        Ok(FromPy {
            py,
            c: classes(py)?,
            k: Keys::new(py),
        })
    }

    fn is(&self, obj: &Bound<'py, PyAny>, class: &Py<PyAny>) -> PyResult<bool> {
        let class = class.bind(self.py);
        Ok(obj.get_type().is(class) || obj.is_instance(class)?)
    }

    fn text(&self, obj: &Bound<'py, PyAny>, key: &Bound<'py, PyString>) -> PyResult<String> {
        obj.getattr(key)?.extract()
    }

    fn opt_text(
        &self,
        obj: &Bound<'py, PyAny>,
        key: &Bound<'py, PyString>,
    ) -> PyResult<Option<String>> {
        obj.getattr(key)?.extract()
    }

    /// The Haystack value of a Python object (`None` is Null; ints and floats are Numbers).
    pub fn value(&self, obj: &Bound<'py, PyAny>) -> PyResult<Value> {
        let c = self.c;
        let py = self.py;
        if obj.is_none() {
            return Ok(Value::Null);
        }
        if obj.is(c.marker.bind(py)) {
            return Ok(Value::Marker);
        }
        if obj.is(c.na.bind(py)) {
            return Ok(Value::Na);
        }
        if obj.is(c.remove.bind(py)) {
            return Ok(Value::Remove);
        }
        if let Ok(b) = obj.cast::<pyo3::types::PyBool>() {
            return Ok(Value::Bool(b.is_true()));
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(Value::Str(s.to_cow()?.into_owned()));
        }
        if obj.cast::<pyo3::types::PyFloat>().is_ok() || obj.cast::<pyo3::types::PyInt>().is_ok() {
            return Ok(Value::Number(Number::new(obj.extract::<f64>()?)));
        }
        if self.is(obj, &c.number)? {
            let value: f64 = obj.getattr(&self.k.val)?.extract()?;
            let unit = self.opt_text(obj, &self.k.unit)?;
            return Ok(Value::Number(Number { value, unit }));
        }
        if self.is(obj, &c.reference)? {
            return Ok(Value::Ref(Ref {
                id: self.text(obj, &self.k.id)?,
                dis: self.opt_text(obj, &self.k.dis)?,
            }));
        }
        if self.is(obj, &c.uri)? {
            return Ok(Value::Uri(self.text(obj, &self.k.val)?));
        }
        if self.is(obj, &c.symbol)? {
            return Ok(Value::Symbol(self.text(obj, &self.k.val)?));
        }
        if self.is(obj, &c.coord)? {
            let lat: f64 = obj.getattr(&self.k.lat)?.extract()?;
            let lng: f64 = obj.getattr(&self.k.lng)?.extract()?;
            return Ok(Value::Coord(Coord::new(lat, lng).map_err(bad)?));
        }
        if self.is(obj, &c.xstr)? {
            return Ok(Value::XStr(Box::new(XStr {
                type_name: self.text(obj, &self.k.type_)?,
                value: self.text(obj, &self.k.val)?,
            })));
        }
        // datetime before date: a datetime is a date.
        if obj.is_instance(c.py_datetime.bind(py))? {
            return Ok(Value::DateTime(Box::new(self.datetime(obj)?)));
        }
        if obj.is_instance(c.py_date.bind(py))? {
            return Ok(Value::Date(self.date(obj)?));
        }
        if obj.is_instance(c.py_time.bind(py))? {
            return Ok(Value::Time(self.time(obj)?));
        }
        if let Ok(list) = obj.cast::<PyList>() {
            return list
                .iter()
                .map(|v| self.value(&v))
                .collect::<PyResult<_>>()
                .map(Value::List);
        }
        if let Ok(tuple) = obj.cast::<PyTuple>() {
            return tuple
                .iter()
                .map(|v| self.value(&v))
                .collect::<PyResult<_>>()
                .map(Value::List);
        }
        if let Ok(dict) = obj.cast::<PyDict>() {
            return Ok(Value::Dict(Box::new(self.dict(dict)?)));
        }
        if self.is(obj, &c.grid)? {
            return Ok(Value::Grid(Box::new(self.grid(obj)?)));
        }
        Err(type_error(obj))
    }

    fn date(&self, obj: &Bound<'py, PyAny>) -> PyResult<Date> {
        let y: i32 = obj.getattr("year")?.extract()?;
        let m: u8 = obj.getattr("month")?.extract()?;
        let d: u8 = obj.getattr("day")?.extract()?;
        Date::new(y, m, d).map_err(bad)
    }

    fn time(&self, obj: &Bound<'py, PyAny>) -> PyResult<Time> {
        let h: u8 = obj.getattr("hour")?.extract()?;
        let m: u8 = obj.getattr("minute")?.extract()?;
        let s: u8 = obj.getattr("second")?.extract()?;
        let us: u32 = obj.getattr("microsecond")?.extract()?;
        Time::new(h, m, s, us * 1000).map_err(bad)
    }

    pub fn datetime(&self, obj: &Bound<'py, PyAny>) -> PyResult<DateTime> {
        let offset = obj.call_method0("utcoffset")?;
        if offset.is_none() {
            return Err(PyValueError::new_err(format!(
                "{} has no UTC offset: Haystack DateTimes need one",
                obj.repr()?
            )));
        }
        let seconds: f64 = offset.call_method0("total_seconds")?.extract()?;
        let tz: Option<String> = match obj.getattr(&self.k.tz_name) {
            Ok(name) => name.extract()?,
            Err(_) => None,
        };
        let tz = tz.or_else(|| {
            // An aware datetime with a zoneinfo zone names it; keep its Haystack name.
            obj.getattr("tzinfo")
                .and_then(|z| z.getattr("key"))
                .and_then(|k| k.extract::<String>())
                .ok()
                .and_then(|key| timezone::from_iana(&key).map(str::to_owned))
        });
        DateTime::new(self.date(obj)?, self.time(obj)?, seconds.round() as i32, tz).map_err(bad)
    }

    pub fn dict(&self, dict: &Bound<'py, PyDict>) -> PyResult<Dict> {
        let mut out = Dict::new();
        for (key, value) in dict.iter() {
            let key: String = key.extract()?;
            let value = self.value(&value)?;
            out.insert(key, value).map_err(bad)?;
        }
        Ok(out)
    }

    /// A `buildwire.haystack.Grid` (meta, columns, rows) as a Rust grid.
    pub fn grid(&self, obj: &Bound<'py, PyAny>) -> PyResult<Grid> {
        let meta = obj.getattr("meta")?;
        let meta = self.dict(meta.cast::<PyDict>()?)?;
        let mut columns = Vec::new();
        for item in obj.getattr("columns")?.try_iter()? {
            let item = item?;
            let (name, col_meta): (String, Bound<'py, PyAny>) = item.extract()?;
            let col_meta = if col_meta.is_none() {
                Dict::new()
            } else {
                self.dict(col_meta.cast::<PyDict>()?)?
            };
            columns.push(Column {
                name,
                meta: col_meta,
            });
        }
        let mut grid = Grid::new(meta, columns).map_err(bad)?;
        let names: Vec<Bound<'py, PyString>> = grid
            .columns()
            .iter()
            .map(|c| PyString::new(self.py, &c.name))
            .collect();
        for (i, row) in obj.getattr("rows")?.try_iter()?.enumerate() {
            let row = row?;
            let row = row.cast::<PyDict>()?;
            let mut cells = Vec::with_capacity(names.len());
            for name in &names {
                cells.push(match row.get_item(name)? {
                    Some(v) => Some(self.value(&v)?),
                    None => None,
                });
            }
            if row.len() > cells.iter().filter(|c| c.is_some()).count() {
                for key in row.keys() {
                    let key: String = key.extract()?;
                    if grid.column_index(&key).is_none() {
                        return Err(PyValueError::new_err(format!(
                            "row {i} has the tag {key:?} that is not a column"
                        )));
                    }
                }
            }
            grid.push_row(cells).map_err(bad)?;
        }
        Ok(grid)
    }
}

/// A grid decoded or received in Rust, held for Python (see `buildwire.haystack.Grid`).
#[pyclass(module = "buildwire._native", frozen)]
pub struct HaystackGrid {
    pub grid: Arc<Grid>,
}

impl HaystackGrid {
    pub fn new(grid: Grid) -> Self {
        HaystackGrid {
            grid: Arc::new(grid),
        }
    }
}

/// How [`HaystackGrid::frame_columns`] gives a column.
enum Shape {
    Number,
    Bool,
    DateTime,
    Text,
    Other,
}

fn shape_of(values: &[Option<&Value>]) -> Shape {
    let mut shape: Option<Shape> = None;
    for value in values.iter().flatten() {
        let this = match value {
            Value::Number(_) => Shape::Number,
            Value::Bool(_) | Value::Marker => Shape::Bool,
            Value::DateTime(_) => Shape::DateTime,
            Value::Str(_) | Value::Ref(_) | Value::Uri(_) | Value::Symbol(_) => Shape::Text,
            Value::Null => continue,
            _ => return Shape::Other,
        };
        match (&shape, &this) {
            (None, _) => shape = Some(this),
            (Some(a), b) if std::mem::discriminant(a) == std::mem::discriminant(b) => {}
            _ => return Shape::Other,
        }
    }
    shape.unwrap_or(Shape::Other)
}

fn text_of(value: &Value) -> Option<&str> {
    match value {
        Value::Str(s) | Value::Uri(s) | Value::Symbol(s) => Some(s),
        Value::Ref(r) => Some(&r.id),
        _ => None,
    }
}

/// Nanoseconds since 1970 of a timestamp.
fn epoch_nanos(dt: &DateTime) -> i64 {
    timezone::utc_seconds(dt)
        .saturating_mul(1_000_000_000)
        .saturating_add(i64::from(dt.time.nanos()))
}

#[pymethods]
impl HaystackGrid {
    /// The grid meta as a dict (without `ver`).
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        ToPy::new(py)?.meta(&self.grid.meta)
    }

    /// The columns as `[(name, meta), ...]`.
    fn columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        ToPy::new(py)?.columns(&self.grid)
    }

    /// The rows as dicts of Python values.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        ToPy::new(py)?.rows(&self.grid)
    }

    /// The number of rows.
    fn __len__(&self) -> usize {
        self.grid.row_count()
    }

    /// The grid's text in `format` (zinc, json, json3, trio).
    fn encode(&self, py: Python<'_>, format: &str) -> PyResult<String> {
        let format: Format = format.parse().map_err(PyValueError::new_err)?;
        let grid = Arc::clone(&self.grid);
        Ok(py.detach(move || format.encode_grid(&grid)))
    }

    /// The columns for a DataFrame or an Arrow table, one tuple per column:
    /// `(name, kind, data, missing, extra)`. `kind` is `number` (data: float64 bytes, NaN
    /// where missing; extra: the first unit), `bool` (uint8 bytes; markers are 1),
    /// `datetime` (int64 nanoseconds since 1970 UTC; extra: the IANA zone when every value
    /// names the same one), `text` (Str, Uri, Symbol, and Ref ids; for `arrow`, data is
    /// `(int32 offsets, utf-8 bytes)`, for `pandas` a list of str or None) or `object` (a
    /// list of Python values, or for `arrow` a list of Zinc texts). `missing` is uint8
    /// bytes, 1 where the row has no value.
    #[pyo3(signature = (target="pandas"))]
    fn frame_columns<'py>(&self, py: Python<'py>, target: &str) -> PyResult<Bound<'py, PyList>> {
        let arrow = match target {
            "pandas" => false,
            "arrow" => true,
            other => {
                return Err(PyValueError::new_err(format!(
                    "target {other:?}: use pandas or arrow"
                )));
            }
        };
        let grid = &self.grid;
        let rows = grid.row_count();
        let out = PyList::empty(py);
        let mut to_py = ToPy::new(py)?;
        for (index, column) in grid.columns().iter().enumerate() {
            let values: Vec<Option<&Value>> = grid
                .rows()
                .map(|row| row.get(index).filter(|v| !matches!(v, Value::Null)))
                .collect();
            let missing: Vec<u8> = values.iter().map(|v| u8::from(v.is_none())).collect();
            let name = PyString::new(py, &column.name).into_any();
            let none = py.None().into_bound(py);
            let (kind, data, extra): (&str, Bound<'py, PyAny>, Bound<'py, PyAny>) =
                match shape_of(&values) {
                    Shape::Number => {
                        let mut bytes = Vec::with_capacity(rows * 8);
                        let mut unit: Option<&str> = None;
                        for v in &values {
                            let x = match v {
                                Some(Value::Number(n)) => {
                                    if unit.is_none() {
                                        unit = n.unit.as_deref();
                                    }
                                    n.value
                                }
                                _ => f64::NAN,
                            };
                            bytes.extend_from_slice(&x.to_ne_bytes());
                        }
                        let unit = match unit {
                            Some(u) => PyString::new(py, u).into_any(),
                            None => none,
                        };
                        ("number", PyByteArray::new(py, &bytes).into_any(), unit)
                    }
                    Shape::Bool => {
                        let bytes: Vec<u8> = values
                            .iter()
                            .map(|v| u8::from(matches!(v, Some(Value::Bool(true) | Value::Marker))))
                            .collect();
                        ("bool", PyByteArray::new(py, &bytes).into_any(), none)
                    }
                    Shape::DateTime => {
                        let mut bytes = Vec::with_capacity(rows * 8);
                        let mut zone: Option<Option<&str>> = None;
                        for v in &values {
                            let ns = match v {
                                Some(Value::DateTime(dt)) => {
                                    let tz = dt.tz.as_deref();
                                    zone = match zone {
                                        None => Some(tz),
                                        Some(z) if z == tz => Some(z),
                                        Some(_) => Some(None),
                                    };
                                    epoch_nanos(dt)
                                }
                                _ => i64::MIN,
                            };
                            bytes.extend_from_slice(&ns.to_ne_bytes());
                        }
                        let iana = zone
                            .flatten()
                            .and_then(|tz| {
                                if tz == "UTC" {
                                    Some("UTC")
                                } else {
                                    timezone::to_iana(tz)
                                }
                            })
                            .unwrap_or("UTC");
                        (
                            "datetime",
                            PyByteArray::new(py, &bytes).into_any(),
                            PyString::new(py, iana).into_any(),
                        )
                    }
                    Shape::Text if arrow => {
                        let mut offsets: Vec<u8> = Vec::with_capacity((rows + 1) * 4);
                        let mut text: Vec<u8> = Vec::new();
                        offsets.extend_from_slice(&0_i32.to_ne_bytes());
                        for v in &values {
                            if let Some(s) = v.and_then(|v| text_of(v)) {
                                text.extend_from_slice(s.as_bytes());
                            }
                            let end = i32::try_from(text.len()).map_err(|_| {
                                PyValueError::new_err(format!(
                                    "column {} holds more than 2 GiB of text",
                                    column.name
                                ))
                            })?;
                            offsets.extend_from_slice(&end.to_ne_bytes());
                        }
                        let data = PyTuple::new(
                            py,
                            [PyBytes::new(py, &offsets), PyBytes::new(py, &text)],
                        )?;
                        ("text", data.into_any(), none)
                    }
                    Shape::Text => {
                        let list = PyList::empty(py);
                        for v in &values {
                            match v.and_then(|v| text_of(v)) {
                                Some(s) => list.append(PyString::new(py, s))?,
                                None => list.append(py.None())?,
                            }
                        }
                        ("text", list.into_any(), none)
                    }
                    Shape::Other => {
                        let list = PyList::empty(py);
                        for v in &values {
                            match v {
                                Some(v) if arrow => {
                                    list.append(PyString::new(py, &zinc::encode_value(v)))?
                                }
                                Some(v) => list.append(to_py.value(v)?)?,
                                None => list.append(py.None())?,
                            }
                        }
                        ("object", list.into_any(), none)
                    }
                };
            let item = PyTuple::new(
                py,
                [
                    name,
                    PyString::new(py, kind).into_any(),
                    data,
                    PyByteArray::new(py, &missing).into_any(),
                    extra,
                ],
            )?;
            out.append(item)?;
        }
        Ok(out)
    }
}

/// Decodes grid text in Rust (without the GIL) into a grid handle.
#[pyfunction]
pub fn haystack_decode(py: Python<'_>, text: &str, format: &str) -> PyResult<HaystackGrid> {
    let format: Format = format.parse().map_err(PyValueError::new_err)?;
    let grid = py
        .detach(|| format.decode_grid(text))
        .map_err(|e| PyValueError::new_err(format!("invalid {format}: {e}")))?;
    Ok(HaystackGrid::new(grid))
}

/// Decodes one Zinc value into its Python object.
#[pyfunction]
pub fn haystack_decode_value<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let value = zinc::decode_value(text)
        .map_err(|e| PyValueError::new_err(format!("invalid zinc value: {e}")))?;
    ToPy::new(py)?.value(&value)
}

/// Encodes a Python value as Zinc.
#[pyfunction]
pub fn haystack_encode_value(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(zinc::encode_value(&FromPy::new(py)?.value(value)?))
}

/// A `buildwire.haystack.Grid` as a grid handle (for encoding and the columnar paths).
#[pyfunction]
pub fn haystack_grid(py: Python<'_>, grid: &Bound<'_, PyAny>) -> PyResult<HaystackGrid> {
    Ok(HaystackGrid::new(FromPy::new(py)?.grid(grid)?))
}
