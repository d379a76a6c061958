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

  // Initialises the chart in #id; marks the container as drawn.
  function draw(id, option) {
    var el = document.getElementById(id);
    if (!el) return;
    var chart = echarts.init(el, null, {renderer: 'canvas'});
    option.animation = false;
    chart.setOption(option);
    el.setAttribute('data-rendered', 'true');
    charts.push(chart);
  }

  // Worker slowdown (min of its DP rank's and its stage's S): DP rank across,
  // PP stage down, colours fixed to 1.0-1.5 like the published SMon view.
  // Without a layout (profiler traces), one row per rank.
  var ranks = data.layout === 'ranks';
  function heatmap() {
    var h = data.heatmap;
    var dps = [], pps = [];
    for (var d = 0; d < h.dp; ++d) dps.push(ranks ? '' : String(d));
    for (var p = 0; p < h.pp; ++p) pps.push(String(p));
    if (ranks) h.cells.forEach(function (c) { pps[c[1]] = String(c[3]); });
    var cells = h.cells.map(function (c) {
      // [dp, pp, colour value, score, rank]
      return [c[0], c[1], Math.min(Math.max(c[2], 1.0), 1.5), c[2], c[3]];
    });
    draw('chart-heatmap', {
      tooltip: {
        formatter: function (p) {
          var v = p.value;
          return 'rank ' + v[4] +
              (ranks ? '' : ' (dp ' + v[0] + ', stage ' + v[1] + ')') +
              '<br>slowdown ' + fmt(v[3], 3);
        }
      },
      grid: {left: 60, right: 20, top: 40, bottom: 40},
      xAxis: {type: 'category', data: dps, name: ranks ? '' : 'DP rank',
              nameLocation: 'middle', nameGap: 26, splitArea: {show: true}},
      yAxis: {type: 'category', data: pps, name: ranks ? 'rank' : 'PP stage',
              inverse: true,
              nameLocation: 'middle', nameGap: 40, splitArea: {show: true}},
      visualMap: {type: 'continuous', min: 1.0, max: 1.5, dimension: 2,
                  calculable: false, orient: 'horizontal', right: 20, top: 0,
                  itemWidth: 12, itemHeight: 200, precision: 2,
                  text: ['1.5', 'slowdown 1.0'],
                  inRange: {color: ['#ffffcc', '#feb24c', '#f03b20', '#800026']}},
      series: [{type: 'heatmap', data: cells, progressive: 0,
                emphasis: {itemStyle: {borderColor: '#000', borderWidth: 1}}}]
    });
  }

  function steps() {
    var s = data.steps;
    var labels = s.step.map(String);
    draw('chart-steps', {
      tooltip: {trigger: 'axis', valueFormatter: function (v) { return fmt(v, 3); }},
      legend: {top: 0},
      grid: {left: 60, right: 20, top: 30, bottom: 40},
      xAxis: {type: 'category', data: labels, name: 'step',
              nameLocation: 'middle', nameGap: 26},
      yAxis: {type: 'value', scale: true, name: 'slowdown'},
      series: [
        {name: 'S of the step (blocking)', type: 'line', data: s.slowdown,
         showSymbol: s.step.length <= 60,
         markLine: {silent: true, symbol: 'none', data: [{yAxis: data.slowdown, name: 'S'}],
                    label: {position: 'insideEndTop',
                            formatter: 'S ' + fmt(data.slowdown, 3)}}},
        {name: 'launch delay (observed / T)', type: 'line', data: s.launch_slowdown,
         showSymbol: s.step.length <= 60}
      ]
    });
  }

  // Bars of "S if only this group were left unfixed".
  function bars(id, d, prefix) {
    draw(id, {
      tooltip: {trigger: 'axis', valueFormatter: function (v) { return fmt(v, 3); }},
      grid: {left: 60, right: 20, top: 10, bottom: 90},
      xAxis: {type: 'category', data: d.keys.map(function (k) { return prefix + k; }),
              axisLabel: {rotate: 40, interval: 0}},
      yAxis: {type: 'value', min: 1.0, scale: true, name: 'slowdown'},
      series: [{type: 'bar', data: d.slowdown, itemStyle: {color: '#e6550d'}}]
    });
  }

  // Colour of an op type (names as in the ops CSV).
  function opColor(name) {
    if (name === 'forward-compute') return '#3182bd';
    if (name === 'backward-compute') return '#31a354';
    if (/^forward-(send|recv)$/.test(name)) return '#9e9ac8';
    if (/^backward-(send|recv)$/.test(name)) return '#6a51a3';
    if (/all-gather|reduce-scatter|all-reduce/.test(name)) return '#fd8d3c';
    if (name === 'gc') return '#e31a1c';
    return '#969696';  // optimizer and the rest
  }

  // The worst step, actual (replayed without launch delays) against ideal:
  // two rows per worker, one bar per op, critical-path ops outlined.
  function timeline() {
    var t = data.timeline;
    var el = document.getElementById('chart-timeline');
    if (!t || !el) return;
    var palette = t.types.map(opColor);
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
              fmt(v[1], 3) + ' - ' + fmt(v[2], 3) + ' ms (' + fmt(v[2] - v[1], 3) + ' ms)' +
              (v[4] === 1 ? '<br>on the critical path' : '');
        }
      },
      grid: {left: 190, right: 30, top: 10, bottom: 60},
      dataZoom: [{type: 'slider', filterMode: 'weakFilter', height: 18, bottom: 8},
                 {type: 'inside', filterMode: 'weakFilter'}],
      xAxis: {type: 'value', min: 0, name: 'ms from the step start',
              nameLocation: 'middle', nameGap: 22},
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
