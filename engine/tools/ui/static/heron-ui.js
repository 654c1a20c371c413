/* Heron UI: the entry script, loaded by index.html as an ES module (its imports load the
 * rest from /static/, this origin only). It draws the topology list (/ui/) or one
 * topology's page (/ui/topologies/<name>) from the tracker's REST API and refreshes it in
 * place. Every value from the API is set as text (textContent / attributes), never parsed
 * as markup.
 *
 *   api.js            the REST client (getJSON, query strings, ApiError)
 *   settings.js       refresh intervals, the windows, the latencies shown
 *   dom.js, format.js building elements; numbers and times as shown
 *   topology-list.js  the list of topologies
 *   topology-page.js  one topology: its layout, state and refresh loop, with its cards:
 *     plans.js          the logical plan (SVG DAG), components table, physical plan
 *     numbers.js        the live counts, rates, latencies and backpressure in them
 *     checkpoints.js, source-lag.js, cluster.js, logs.js   the other cards
 *     charts.js, chart-series.js, health.js   the charts over time (uPlot, vendored
 *                       beside this file) and the Health Manager's records */

import { listPage } from "./topology-list.js";
import { topologyPage } from "./topology-page.js";

const app = document.getElementById("app");
const match = location.pathname.match(/^\/ui\/topologies\/([^/]+)\/?$/);
if (match) topologyPage(app, decodeURIComponent(match[1]));
else listPage(app);
