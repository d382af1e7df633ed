//! The load shape of a sweep and the offered load of one result along it.
//!
//! Fixed concurrency and fixed arrival rate press a server differently: under fixed
//! concurrency a slow server delays the next request and so lowers its own load; under a
//! fixed arrival rate requests keep coming and queue (`shared/notes/validation-method.md`,
//! "Why the numbers diverge"). A capacity is therefore computed along one shape only, in that
//! shape's unit, and a comparison across shapes is refused.
//!
//! How a cell's [`crate::cell::LoadShape`] is read (the cell's own rule: fixed concurrency
//! without a rate is stored as `request_rate = inf`):
//!
//! | `max_concurrency` | `request_rate` | shape |
//! |---|---|---|
//! | C | `inf` or absent | [`SweepShape::Concurrency`], load C |
//! | absent | finite R | [`SweepShape::RequestRate`], load R |
//! | C | finite R | refused: [`LoadRefusal::RateAndConcurrency`] |
//! | absent | `inf` | refused: [`LoadRefusal::Unbounded`] |
//! | absent | absent | refused: [`LoadRefusal::NoLoad`] |

use crate::cell::{LoadShape, RequestRate};
use crate::metric::Unit;
use serde::{Deserialize, Serialize};

/// Which load a sweep varies. Named `SweepShape`, not `LoadShape`: [`crate::cell::LoadShape`]
/// is already a schema name of the API, and utoipa names schemas by type name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SweepShape {
    /// Fixed `max_concurrency` (closed loop, `request_rate = inf`): the load is the number of
    /// requests in flight.
    Concurrency,
    /// Fixed arrival `request_rate` without a concurrency bound (open loop): the load is
    /// requests per second offered.
    RequestRate,
}

impl SweepShape {
    /// The unit of an offered load of this shape: [`Unit::Requests`] (concurrent requests)
    /// for [`SweepShape::Concurrency`], [`Unit::ReqPerS`] for [`SweepShape::RequestRate`].
    pub fn load_unit(self) -> Unit {
        match self {
            SweepShape::Concurrency => Unit::Requests,
            SweepShape::RequestRate => Unit::ReqPerS,
        }
    }
}

/// Why a result's load cannot be placed on a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoadRefusal {
    /// Neither `max_concurrency` nor `request_rate` is known.
    NoLoad,
    /// `request_rate = inf` without `max_concurrency`: every request sent at once, a burst
    /// whose pressure is the number of prompts, not a point on either shape.
    Unbounded,
    /// Both a finite `request_rate` and a `max_concurrency`: which of the two limited the load
    /// depends on the server's speed, so the result belongs to neither shape.
    RateAndConcurrency,
}

impl LoadRefusal {
    /// One sentence for people.
    pub fn explanation(self) -> &'static str {
        match self {
            LoadRefusal::NoLoad => "The result records neither a max_concurrency nor a request_rate.",
            LoadRefusal::Unbounded => "request_rate = inf without max_concurrency sends every request at once: a burst, not a point of a concurrency or request_rate sweep.",
            LoadRefusal::RateAndConcurrency => "Both a finite request_rate and a max_concurrency are set: either may have limited the load, so the result is on neither a concurrency nor a request_rate sweep.",
        }
    }
}

/// A point on a sweep's load axis: the shape and the offered load in [`SweepShape::load_unit`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OfferedLoad {
    /// Which load is varied.
    pub shape: SweepShape,
    /// Concurrent requests (concurrency shape) or req/s (request_rate shape), > 0.
    pub load: f64,
}

/// The shape and offered load of `load` (see the module table).
///
/// # Errors
/// [`LoadRefusal`] when the load is on neither shape.
pub fn classify(load: &LoadShape) -> Result<OfferedLoad, LoadRefusal> {
    match (load.max_concurrency, load.request_rate) {
        (Some(c), None | Some(RequestRate::Infinite)) => Ok(OfferedLoad {
            shape: SweepShape::Concurrency,
            load: c as f64,
        }),
        (None, Some(RequestRate::PerSecond(r))) => Ok(OfferedLoad {
            shape: SweepShape::RequestRate,
            load: r,
        }),
        (Some(_), Some(RequestRate::PerSecond(_))) => Err(LoadRefusal::RateAndConcurrency),
        (None, Some(RequestRate::Infinite)) => Err(LoadRefusal::Unbounded),
        (None, None) => Err(LoadRefusal::NoLoad),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(c: Option<u64>, r: Option<RequestRate>) -> LoadShape {
        LoadShape {
            max_concurrency: c,
            request_rate: r,
            burstiness: None,
        }
    }

    #[test]
    fn each_row_of_the_table() {
        let conc = |c| {
            Ok(OfferedLoad {
                shape: SweepShape::Concurrency,
                load: c,
            })
        };
        assert_eq!(
            classify(&shape(Some(4), Some(RequestRate::Infinite))),
            conc(4.0)
        );
        assert_eq!(classify(&shape(Some(16), None)), conc(16.0));
        assert_eq!(
            classify(&shape(None, Some(RequestRate::PerSecond(2.5)))),
            Ok(OfferedLoad {
                shape: SweepShape::RequestRate,
                load: 2.5
            })
        );
        assert_eq!(
            classify(&shape(Some(4), Some(RequestRate::PerSecond(2.5)))),
            Err(LoadRefusal::RateAndConcurrency)
        );
        assert_eq!(
            classify(&shape(None, Some(RequestRate::Infinite))),
            Err(LoadRefusal::Unbounded)
        );
        assert_eq!(classify(&shape(None, None)), Err(LoadRefusal::NoLoad));
    }
}
