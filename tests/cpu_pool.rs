//! CPU trials of the pooling contract: PyTorch's own outputs (tests/data/torch_pool.txt, written by
//! scripts/torch_pool_fixture.py from CUDA tensors) against gpuprims' output sizes, parameter
//! errors and CPU oracle, plus the error messages name the parameter and its values.

use gpuprims::cpu::pool as cpu;
use gpuprims::{AvgPool2d, Error, Pool2d};
use libtest_mimic::{Failed, Trial};
use ndarray::Array2;

use crate::common::fixture_numbers;

/// One PyTorch case of the fixture.
pub struct TorchCase {
    /// Whether PyTorch ran the plane in float32.
    pub f32: bool,
    pub shape: (usize, usize),
    pub x: Vec<f64>,
    pub op: TorchOp,
    /// `None`: PyTorch rejected the parameters (its message).
    pub result: std::result::Result<TorchResult, String>,
}

pub enum TorchOp {
    Max(Pool2d),
    Avg(AvgPool2d),
}

pub struct TorchResult {
    pub out: (usize, usize),
    pub y: Vec<f64>,
    /// Max pooling's flat indices.
    pub idx: Vec<i64>,
}

fn pair(v: &[f64], i: usize) -> (usize, usize) {
    (v[i] as usize, v[i + 1] as usize)
}

/// The cases of tests/data/torch_pool.txt.
pub fn torch_cases() -> Vec<TorchCase> {
    let text = include_str!("data/torch_pool.txt");
    let mut plane: Option<(bool, (usize, usize), Vec<f64>)> = None;
    let mut cases = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let parts: Vec<&str> = line.split('|').map(str::trim).collect();
        let head: Vec<&str> = parts[0].split_whitespace().collect();
        if head[0] == "x" {
            let s = fixture_numbers(parts[1]);
            plane = Some((head[1] == "f32", pair(&s, 0), fixture_numbers(parts[2])));
            continue;
        }
        let (f32, shape, x) = plane.clone().expect("an x line comes first");
        let (kind, err) = if head[0] == "err" {
            (head[1], true)
        } else {
            (head[0], false)
        };
        let p = fixture_numbers(parts[1]);
        let window = Pool2d::new(pair(&p, 0)).stride(pair(&p, 2)).padding(pair(&p, 4));
        let op = match kind {
            "max" => TorchOp::Max(window.dilation(pair(&p, 6)).ceil_mode(p[8] != 0.0)),
            _ => TorchOp::Avg(
                AvgPool2d::new(window.kernel)
                    .stride(window.stride)
                    .padding(window.padding)
                    .ceil_mode(p[6] != 0.0)
                    .count_include_pad(p[7] != 0.0)
                    .divisor_override(Some(p[8] as i32).filter(|&d| d != 0)),
            ),
        };
        let result = if err {
            Err(parts[2].to_string())
        } else {
            let o = fixture_numbers(parts[2]);
            Ok(TorchResult {
                out: pair(&o, 0),
                y: fixture_numbers(parts[3]),
                idx: parts
                    .get(4)
                    .map_or(Vec::new(), |s| fixture_numbers(s).iter().map(|&v| v as i64).collect()),
            })
        };
        cases.push(TorchCase {
            f32,
            shape,
            x,
            op,
            result,
        });
    }
    cases
}

/// Same value, NaN equal to NaN, bit for bit otherwise (−0 and +0 aside).
pub fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// The oracle's `(values, indices)` for a case, in the case's precision.
fn oracle(case: &TorchCase) -> gpuprims::Result<(Vec<f64>, Vec<i64>)> {
    let (h, w) = case.shape;
    macro_rules! run {
        ($t:ty) => {{
            let x = Array2::from_shape_vec((h, w), case.x.iter().map(|&v| v as $t).collect()).expect("shape");
            match &case.op {
                TorchOp::Max(p) => {
                    let (y, i) = cpu::max_pool2d(&x, p)?;
                    (y.iter().map(|&v| v as f64).collect(), i.iter().copied().collect())
                }
                TorchOp::Avg(p) => (cpu::avg_pool2d(&x, p)?.iter().map(|&v| v as f64).collect(), Vec::new()),
            }
        }};
    }
    Ok(if case.f32 { run!(f32) } else { run!(f64) })
}

fn oracle_vs_torch() -> Result<(), Failed> {
    let cases = torch_cases();
    let (mut ok, mut rejected) = (0, 0);
    for (n, case) in cases.iter().enumerate() {
        let size = match &case.op {
            TorchOp::Max(p) => p.output_size(case.shape.0, case.shape.1),
            TorchOp::Avg(p) => p.output_size(case.shape.0, case.shape.1),
        };
        match (&case.result, size) {
            (Err(_), Err(_)) => rejected += 1,
            (Err(msg), Ok(s)) => return Err(format!("case {n}: PyTorch rejects ({msg}), we give {s:?}").into()),
            (Ok(_), Err(e)) => return Err(format!("case {n}: PyTorch accepts, we reject: {e}").into()),
            (Ok(want), Ok(s)) => {
                if s != want.out {
                    return Err(format!("case {n}: output {s:?}, PyTorch {:?}", want.out).into());
                }
                let (y, idx) = oracle(case)?;
                if y.len() != want.y.len() || y.iter().zip(&want.y).any(|(&a, &b)| !same(a, b)) {
                    return Err(format!("case {n}: oracle {y:?}, PyTorch {:?}", want.y).into());
                }
                if idx != want.idx {
                    return Err(format!("case {n}: oracle indices {idx:?}, PyTorch {:?}", want.idx).into());
                }
                ok += 1;
            }
        }
    }
    if ok < 1000 || rejected == 0 {
        return Err(format!("fixture too small: {ok} accepted, {rejected} rejected cases").into());
    }
    Ok(())
}

fn invalid(e: Error, name: &str, values: &[&str]) -> Result<(), Failed> {
    match &e {
        Error::InvalidArgument { name: n, reason } if *n == name && values.iter().all(|v| reason.contains(v)) => Ok(()),
        _ => Err(format!("expected InvalidArgument `{name}` mentioning {values:?}, got {e:?}").into()),
    }
}

fn parameter_errors() -> Result<(), Failed> {
    let err = |p: Pool2d| p.output_size(8, 8).expect_err("invalid");
    invalid(err(Pool2d::new((0, 2))), "kernel", &["(0, 2)"])?;
    invalid(err(Pool2d::new((2, 2)).stride((2, 0))), "stride", &["(2, 0)"])?;
    invalid(err(Pool2d::new((2, 2)).dilation((0, 1))), "dilation", &["(0, 1)"])?;
    invalid(
        err(Pool2d::new((3, 2)).padding((1, 2))),
        "padding",
        &["(1, 2)", "(3, 2)"],
    )?;
    invalid(err(Pool2d::new((9, 9))), "output size", &["8 × 8", "0 × 0"])?;
    let avg = AvgPool2d::new((2, 2)).divisor_override(Some(0));
    invalid(
        avg.output_size(4, 4).expect_err("zero divisor"),
        "divisor_override",
        &["zero"],
    )?;
    let x = ndarray::Array1::<f32>::zeros(4);
    invalid(
        cpu::max_pool2d(&x, &Pool2d::new((1, 1))).expect_err("1-D"),
        "x",
        &["[4]"],
    )?;
    // The tutorial's odd case: 25 × 25 with 2 × 2 windows is 13 × 13 in ceil mode.
    assert_eq!(Pool2d::new((2, 2)).ceil_mode(true).output_size(25, 25)?, (13, 13));
    assert_eq!(Pool2d::new((2, 2)).output_size(25, 25)?, (12, 12));
    Ok(())
}

/// The kernels' magic-number division equals `/` and `%` for divisors and dividends across the
/// whole `u32` range (edges included).
fn fast_division() -> Result<(), Failed> {
    use gpuprims::abi::FastDiv;
    use rand::Rng;
    let mut r = crate::common::rng(11);
    let mut divisors: Vec<u32> = (1..=300)
        .chain([
            224,
            112,
            56,
            1 << 16,
            (1 << 31) - 1,
            1 << 31,
            (1 << 31) + 1,
            u32::MAX - 1,
            u32::MAX,
        ])
        .collect();
    divisors.extend((0..300).map(|_| r.random_range(1..=u32::MAX)));
    for d in divisors {
        let f = FastDiv::new(d);
        let edges = [
            0,
            1,
            d - 1,
            d,
            d.saturating_add(1),
            u32::MAX - 1,
            u32::MAX,
            u32::MAX / d * d,
            (u32::MAX / d * d).wrapping_sub(1),
        ];
        for n in edges.into_iter().chain((0..2000).map(|_| r.random::<u32>())) {
            if f.divrem(n) != (n / d, n % d) {
                return Err(format!("{n} / {d}: {:?}, expected {:?}", f.divrem(n), (n / d, n % d)).into());
            }
        }
    }
    Ok(())
}

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("cpu_pool::fast_division_is_exact", fast_division),
        Trial::test("cpu_pool::oracle_matches_pytorch_fixture", oracle_vs_torch),
        Trial::test("cpu_pool::parameter_errors_name_the_values", parameter_errors),
    ]
}
