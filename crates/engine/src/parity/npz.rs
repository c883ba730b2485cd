//! Reading a probe's `.npz` archive: its arrays in the order they were written (the zip's
//! member order, which is the order `record` and `numpy.savez` write them in), and the
//! helper's manifest, when there is one, for each array's recorded dtype and location.

use std::io::Read;
use std::path::Path;

use npyz::{DType, NpyFile, TypeChar};
use serde::Deserialize;

use super::{Location, MANIFEST, ParityError, Tensor, Values};

/// One manifest entry, as the helper writes it.
#[derive(Deserialize)]
struct Entry {
    name: String,
    dtype: Option<String>,
    file: Option<String>,
    line: Option<u32>,
}

/// The arrays of `path`, in the archive's order.
pub fn read_npz(path: &Path) -> Result<Vec<Tensor>, ParityError> {
    let fail = |message: String| ParityError::Read {
        file: path.display().to_string(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut zip =
        zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(|e| fail(e.to_string()))?;
    let mut manifest: Vec<Entry> = Vec::new();
    let mut tensors = Vec::new();
    for index in 0..zip.len() {
        let mut member = zip.by_index(index).map_err(|e| fail(e.to_string()))?;
        let member_name = member.name().to_string();
        if member_name == MANIFEST {
            let mut text = String::new();
            member
                .read_to_string(&mut text)
                .map_err(|e| fail(format!("{MANIFEST}: {e}")))?;
            manifest = serde_json::from_str(&text).map_err(|e| fail(format!("{MANIFEST}: {e}")))?;
            continue;
        }
        let Some(name) = npyz::npz::array_name_from_file_name(&member_name) else {
            continue;
        };
        let name = name.to_string();
        let npy = NpyFile::new(member).map_err(|e| fail(format!("array `{name}`: {e}")))?;
        let shape = npy.shape().to_vec();
        let (dtype, values) = values(npy).map_err(|e| fail(format!("array `{name}`: {e}")))?;
        tensors.push(Tensor {
            name,
            shape,
            dtype,
            values,
            location: None,
        });
    }
    for entry in manifest {
        if let Some(tensor) = tensors.iter_mut().find(|t| t.name == entry.name) {
            if let Some(dtype) = entry.dtype {
                tensor.dtype = dtype;
            }
            if let (Some(file), Some(line)) = (entry.file, entry.line) {
                tensor.location = Some(Location { file, line });
            }
        }
    }
    Ok(tensors)
}

/// The dtype's NumPy name and the values, in logical (C, row-major) order whatever order
/// the file stores them in: a transposed array (`np.asarray(w.T)`) is written in Fortran
/// order and compared element by element as NumPy indexes it.
fn values<R: Read>(npy: NpyFile<R>) -> Result<(String, Values), String> {
    let fortran = npy.order() == npyz::Order::Fortran;
    let shape = npy.shape().to_vec();
    let (name, values) = stored_values(npy)?;
    if !fortran {
        return Ok((name, values));
    }
    let order = c_order_from_fortran(&shape);
    let values = match values {
        Values::Float(v) => Values::Float(order.iter().map(|&i| v[i]).collect()),
        Values::Int(v) => Values::Int(order.iter().map(|&i| v[i]).collect()),
    };
    Ok((name, values))
}

/// For each element in C order, its position in Fortran-ordered storage of `shape`.
fn c_order_from_fortran(shape: &[u64]) -> Vec<usize> {
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let total: usize = dims.iter().product();
    let mut strides = Vec::with_capacity(dims.len());
    let mut stride = 1;
    for &d in &dims {
        strides.push(stride);
        stride *= d;
    }
    let mut index = vec![0usize; dims.len()];
    let mut order = Vec::with_capacity(total);
    for _ in 0..total {
        order.push(index.iter().zip(&strides).map(|(i, s)| i * s).sum());
        // The next C-order index: the last axis moves fastest.
        for axis in (0..dims.len()).rev() {
            index[axis] += 1;
            if index[axis] < dims[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    order
}

/// The dtype's NumPy name and the values in the order the file stores them.
fn stored_values<R: Read>(npy: NpyFile<R>) -> Result<(String, Values), String> {
    let DType::Plain(ty) = npy.dtype() else {
        return Err("structured arrays are not compared".to_string());
    };
    let size = ty.size_field();
    let read = |e: std::io::Error| e.to_string();
    let (name, values) = match (ty.type_char(), size) {
        (TypeChar::Float, 4) => (
            "float32",
            Values::Float(
                npy.into_vec::<f32>()
                    .map_err(read)?
                    .into_iter()
                    .map(f64::from)
                    .collect(),
            ),
        ),
        (TypeChar::Float, 8) => (
            "float64",
            Values::Float(npy.into_vec::<f64>().map_err(read)?),
        ),
        (TypeChar::Bool, 1) => (
            "bool",
            Values::Int(
                npy.into_vec::<bool>()
                    .map_err(read)?
                    .into_iter()
                    .map(i128::from)
                    .collect(),
            ),
        ),
        (TypeChar::Int, 1) => ("int8", ints(npy.into_vec::<i8>().map_err(read)?)),
        (TypeChar::Int, 2) => ("int16", ints(npy.into_vec::<i16>().map_err(read)?)),
        (TypeChar::Int, 4) => ("int32", ints(npy.into_vec::<i32>().map_err(read)?)),
        (TypeChar::Int, 8) => ("int64", ints(npy.into_vec::<i64>().map_err(read)?)),
        (TypeChar::Uint, 1) => ("uint8", ints(npy.into_vec::<u8>().map_err(read)?)),
        (TypeChar::Uint, 2) => ("uint16", ints(npy.into_vec::<u16>().map_err(read)?)),
        (TypeChar::Uint, 4) => ("uint32", ints(npy.into_vec::<u32>().map_err(read)?)),
        (TypeChar::Uint, 8) => ("uint64", ints(npy.into_vec::<u64>().map_err(read)?)),
        _ => {
            return Err(format!(
                "dtype {ty} is not compared (bool, integers, float32 and float64 are; the helper \
                 records float16 and bfloat16 as float32)"
            ));
        }
    };
    Ok((name.to_string(), values))
}

fn ints<T: Into<i128>>(values: Vec<T>) -> Values {
    Values::Int(values.into_iter().map(Into::into).collect())
}
