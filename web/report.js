// SPDX-License-Identifier: Apache-2.0
// strag's HTML report: draws the charts from the JSON data blob (the script
// element #strag-data, written by src/report/render/html_report.cc) with the
// inlined ECharts. Inlined by cmake/echarts.cmake; must not contain the text
// of a script start or end tag.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('strag-data').textContent);
  var enc = echarts.format.encodeHTML;
  var charts = [];

  function fmt(v, digits) {
    return v === null || v === undefined ? 'n/a' : v.toFixed(digits);
  }

  // A time given in milliseconds, in the unit that suits it: "46.73 s",
  // "420.2 ms", "35 µs" (no trailing zeros).
  function fmtMs(ms) {
    if (ms === null || ms === undefined) return 'n/a';
    var a = Math.abs(ms);
    function short(v, digits) { return String(parseFloat(v.toFixed(digits))); }
    if (a >= 1000) return short(ms / 1000, a >= 100000 ? 1 : 2) + ' s';
    if (a >= 1 || a === 0) return short(ms, a >= 100 ? 1 : 2) + ' ms';
    return short(ms * 1000, 1) + ' µs';
  }

  // Initialises the chart in #id; marks the container as drawn.
  function draw(id, option) {
    var el = document.getElementById(id);
    if (!el) return null;
    var chart = echarts.init(el, null, {renderer: 'canvas'});
    option.animation = false;
    chart.setOption(option);
    el.setAttribute('data-rendered', 'true');
    charts.push(chart);
    return chart;
  }

  // The heatmap's colour scale: the job's own range of values (default), or
  // SMon's fixed 1.0 to 1.5. The job's range spans at least 0.05, so that
  // the noise of a healthy job (cells up to 1.003, say) stays pale instead
  // of its noisiest cell being painted as a straggler.
  var SCALE_COLORS = ['#ffffcc', '#feb24c', '#f03b20', '#800026'];
  var MIN_SPAN = 0.05;
  function scaleOf(kind, values) {
    if (kind === 'smon') return {min: 1.0, max: 1.5};
    var lo = Infinity, hi = -Infinity;
    values.forEach(function (v) {
      if (v === null || !isFinite(v)) return;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    });
    if (!isFinite(lo)) return {min: 1.0, max: 1.5};
    lo = Math.min(lo, 1.0);
    return {min: lo, max: Math.max(hi, lo + MIN_SPAN)};
  }

  // Worker slowdown (min of its DP rank's and its stage's S): DP rank across,
  // PP stage down. Without a layout (profiler traces), rank down and step
  // across: "S if only this rank were left unfixed" in each step. Values in
  // the cells when they fit; the largest straggler outlined.
  var ranks = data.layout === 'ranks';
  var MAX_LABELLED_CELLS = 400;
  function heatmap() {
    var h = data.heatmap;
    var grid = ranks && h.grid && h.grid.steps.length > 0 ? h.grid : null;
    var xs = [], ys = [], cells;
    var straggler = String(h.straggler);
    function outline(isStraggler) {
      return isStraggler ? {borderColor: '#000', borderWidth: 2.5} : undefined;
    }
    if (grid) {
      xs = grid.steps.map(String);
      ys = grid.ranks.map(String);
      cells = grid.cells.map(function (c) {
        // [step index, rank index, value]
        return {value: [c[0], c[1], c[2]],
                itemStyle: outline(ys[c[1]] === straggler)};
      });
    } else {
      for (var d = 0; d < h.dp; ++d) xs.push(ranks ? '' : String(d));
      for (var p = 0; p < h.pp; ++p) ys.push(String(p));
      if (ranks) h.cells.forEach(function (c) { ys[c[1]] = String(c[3]); });
      cells = h.cells.map(function (c) {
        // [dp, pp, score, rank]
        return {value: [c[0], c[1], c[2], c[3]],
                itemStyle: outline(String(c[3]) === straggler)};
      });
    }
    var values = cells.map(function (c) { return c.value[2]; });
    var labelled = cells.length <= MAX_LABELLED_CELLS;
    function option(kind) {
      var scale = scaleOf(kind, values);
      return {
        tooltip: {
          formatter: function (p) {
            var v = p.value;
            if (grid) {
              return 'rank ' + enc(ys[v[1]]) + ', step ' + enc(xs[v[0]]) +
                  '<br>S if only this rank were left unfixed ' + fmt(v[2], 3);
            }
            return 'rank ' + v[3] +
                (ranks ? '' : ' (dp ' + v[0] + ', stage ' + v[1] + ')') +
                '<br>slowdown ' + fmt(v[2], 3);
          }
        },
        grid: {left: 10, right: 20, top: 50, bottom: 40, containLabel: true},
        xAxis: {type: 'category', data: xs,
                name: grid ? 'step' : ranks ? '' : 'DP rank',
                nameLocation: 'middle', nameGap: 26, splitArea: {show: true}},
        yAxis: {type: 'category', data: ys, name: ranks ? 'rank' : 'PP stage',
                inverse: true, nameLocation: 'end', splitArea: {show: true}},
        visualMap: {type: 'continuous', min: scale.min, max: scale.max,
                    dimension: 2, calculable: false, orient: 'horizontal',
                    right: 20, top: 0, itemWidth: 12, itemHeight: 200,
                    precision: 3,
                    text: [fmt(scale.max, 3), 'slowdown ' + fmt(scale.min, 3)],
                    inRange: {color: SCALE_COLORS}},
        series: [{type: 'heatmap', data: cells, progressive: 0,
                  label: {show: labelled, fontSize: 10,
                          formatter: function (p) { return fmt(p.value[2], 2); }},
                  emphasis: {itemStyle: {borderColor: '#000', borderWidth: 1}}}]
      };
    }
    var chart = draw('chart-heatmap', option('job'));
    var el = document.getElementById('chart-heatmap');
    if (chart && el) {
      el.setAttribute('data-scale', 'job');
      document.querySelectorAll('#heatmap-scale button').forEach(function (b) {
        b.addEventListener('click', function () {
          chart.setOption(option(b.dataset.scale));
          el.setAttribute('data-scale', b.dataset.scale);
          document.querySelectorAll('#heatmap-scale button').forEach(
              function (o) { o.classList.toggle('on', o === b); });
        });
      });
    }
  }

  // [step, value] pairs on a numeric step axis, with a break (null) where
  // steps are missing (a stride over 1.5 times the usual one: traces often
  // keep every 10th step), so that a gap shows as one.
  function withGaps(steps, values) {
    var strides = [];
    for (var k = 1; k < steps.length; ++k) strides.push(steps[k] - steps[k - 1]);
    strides.sort(function (a, b) { return a - b; });
    var usual = strides.length ? strides[Math.floor(strides.length / 2)] : 1;
    var out = [];
    for (var i = 0; i < steps.length; ++i) {
      if (i > 0 && steps[i] - steps[i - 1] > 1.5 * usual) out.push([null, null]);
      out.push([steps[i], values[i]]);
    }
    return out;
  }

  function steps() {
    var s = data.steps;
    var few = s.step.length <= 60;
    draw('chart-steps', {
      tooltip: {trigger: 'axis', valueFormatter: function (v) { return fmt(v, 3); }},
      legend: {top: 0},
      grid: {left: 10, right: 30, top: 30, bottom: 30, containLabel: true},
      xAxis: {type: 'value', name: 'step', minInterval: 1, scale: true,
              nameLocation: 'middle', nameGap: 26},
      yAxis: {type: 'value', scale: true, name: 'slowdown'},
      series: [
        {name: 'S of the step (blocking)', type: 'line',
         data: withGaps(s.step, s.slowdown), connectNulls: false,
         showSymbol: few,
         markLine: {silent: true, symbol: 'none', data: [{yAxis: data.slowdown, name: 'S'}],
                    label: {position: 'insideEndTop',
                            formatter: 'S ' + fmt(data.slowdown, 3)}}},
        {name: 'launch delay (observed / T)', type: 'line',
         data: withGaps(s.step, s.launch_slowdown), connectNulls: false,
         showSymbol: few}
      ]
    });
  }

  // Bars of "S if only this group were left unfixed".
  function bars(id, d, prefix) {
    draw(id, {
      tooltip: {trigger: 'axis', valueFormatter: function (v) { return fmt(v, 3); }},
      // Rotated labels reach left of their tick: room for the first one.
      grid: {left: 50, right: 20, top: 10, bottom: 10, containLabel: true},
      xAxis: {type: 'category', data: d.keys.map(function (k) { return prefix + k; }),
              axisLabel: {rotate: d.keys.length > 4 ? 40 : 0, interval: 'auto',
                          hideOverlap: true}},
      yAxis: {type: 'value', min: 1.0, scale: true, name: 'slowdown'},
      series: [{type: 'bar', data: d.slowdown, itemStyle: {color: '#e6550d'}}]
    });
  }

  // One colour per op type (names as in the ops CSV and the profiler
  // model), no two alike: compute in blues and greens, pipeline transfers in
  // purples, collectives in oranges, browns and pinks, host work in reds.
  var OP_COLORS = {
    'forward-compute': '#3182bd', 'backward-compute': '#31a354',
    'compute': '#6baed6',
    'forward-send': '#9e9ac8', 'forward-recv': '#bcbddc',
    'backward-send': '#6a51a3', 'backward-recv': '#807dba',
    'send': '#54278f', 'recv': '#dadaeb',
    'params-all-gather': '#fdae6b', 'grads-reduce-scatter': '#e6550d',
    'separate-grads-all-reduce': '#fd8d3c',
    'layernorm-grads-all-reduce': '#a63603',
    'embedding-grads-all-reduce': '#d94801',
    'all-reduce': '#f16913', 'all-gather': '#fdd0a2',
    'reduce-scatter': '#8c6d31', 'broadcast': '#bd9e39', 'reduce': '#e7ba52',
    'all-to-all': '#e377c2', 'barrier': '#7f7f7f', 'other-comm': '#c7c7c7',
    'optimizer-clip-main-grad': '#74c476', 'optimizer': '#006d2c',
    'gc': '#e31a1c'
  };
  var SPARE_COLORS = ['#17becf', '#bcbd22', '#8c564b', '#393b79', '#637939'];
  function opColors(names) {
    var spare = 0;
    return names.map(function (name) {
      return OP_COLORS[name] || SPARE_COLORS[spare++ % SPARE_COLORS.length];
    });
  }

  // The worst step, actual (replayed without launch delays) against ideal:
  // two rows per worker, one bar per op, critical-path ops outlined.
  function timeline() {
    var t = data.timeline;
    var el = document.getElementById('chart-timeline');
    if (!t || !el) return;
    var palette = opColors(t.types);
    el.style.height = Math.max(200, t.rows.length * 16 + 80) + 'px';
    function renderItem(params, api) {
      var row = api.value(0);
      var start = api.coord([api.value(1), row]);
      var end = api.coord([api.value(2), row]);
      var h = api.size([0, 1])[1] * 0.7;
      var rect = echarts.graphic.clipRectByRect(
          {x: start[0], y: start[1] - h / 2, width: Math.max(end[0] - start[0], 0.5), height: h},
          {x: params.coordSys.x, y: params.coordSys.y,
           width: params.coordSys.width, height: params.coordSys.height});
      if (!rect) return null;
      var critical = api.value(4) === 1;
      return {type: 'rect', shape: rect,
              style: {fill: palette[api.value(3)], opacity: row % 2 ? 0.55 : 1,
                      stroke: critical ? '#000' : '#fff', lineWidth: critical ? 1.5 : 0.5}};
    }
    draw('chart-timeline', {
      tooltip: {
        formatter: function (p) {
          var v = p.value;
          return enc(t.rows[v[0]]) + '<br>' + enc(t.types[v[3]]) +
              (v[5] >= 0 ? ' microbatch ' + v[5] : '') + '<br>' +
              fmtMs(v[1]) + ' to ' + fmtMs(v[2]) + ' (' + fmtMs(v[2] - v[1]) + ')' +
              (v[4] === 1 ? '<br>on the critical path' : '');
        }
      },
      grid: {left: 10, right: 30, top: 10, bottom: 60, containLabel: true},
      dataZoom: [{type: 'slider', filterMode: 'weakFilter', height: 18, bottom: 8},
                 {type: 'inside', filterMode: 'weakFilter'}],
      xAxis: {type: 'value', min: 0, name: 'from the step start',
              nameLocation: 'middle', nameGap: 22,
              axisLabel: {formatter: fmtMs, hideOverlap: true}},
      yAxis: {type: 'category', data: t.rows, inverse: true,
              axisLabel: {interval: 0, fontSize: 10}},
      series: [{type: 'custom', renderItem: renderItem, data: t.ops,
                encode: {x: [1, 2], y: 0}, progressive: 0,
                markLine: {silent: true, symbol: 'none',
                           data: [{xAxis: t.step_ms, name: 'actual'},
                                  {xAxis: t.ideal_step_ms, name: 'ideal'}],
                           label: {position: 'insideEndTop', formatter: '{b}'}}}]
    });
    var legend = document.getElementById('timeline-legend');
    if (legend) {
      t.types.forEach(function (name, i) {
        var item = document.createElement('span');
        var swatch = document.createElement('i');
        swatch.style.background = palette[i];
        item.appendChild(swatch);
        item.appendChild(document.createTextNode(name));
        legend.appendChild(item);
      });
    }
  }

  heatmap();
  steps();
  bars('chart-optype', data.by_optype, '');
  bars('chart-stage', data.by_stage, ranks ? 'rank ' : 'stage ');
  timeline();
  window.addEventListener('resize', function () {
    charts.forEach(function (c) { c.resize(); });
  });
})();
