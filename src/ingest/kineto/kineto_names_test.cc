// SPDX-License-Identifier: Apache-2.0
#include "ingest/kineto/kineto_names.h"

#include <gtest/gtest.h>

namespace strag::ingest::kineto {
namespace {

using trace::OpType;

TEST(KinetoNamesTest, CollectivesInEverySpelling) {
  EXPECT_EQ(CollectiveFromName("allreduce"), OpType::kAllReduce);
  EXPECT_EQ(CollectiveFromName("all_reduce"), OpType::kAllReduce);
  EXPECT_EQ(CollectiveFromName("AllReduce"), OpType::kAllReduce);
  EXPECT_EQ(CollectiveFromName("allreduce_coalesced"), OpType::kAllReduce);
  EXPECT_EQ(CollectiveFromName("_allgather_base"), OpType::kAllGather);
  EXPECT_EQ(CollectiveFromName("allgather_into_tensor_coalesced"),
            OpType::kAllGather);
  EXPECT_EQ(CollectiveFromName("_reduce_scatter_base"), OpType::kReduceScatter);
  EXPECT_EQ(CollectiveFromName("reduce_scatter_tensor_coalesced"),
            OpType::kReduceScatter);
  EXPECT_EQ(CollectiveFromName("all_to_all"), OpType::kAllToAll);
  EXPECT_EQ(CollectiveFromName("alltoall_base"), OpType::kAllToAll);
  EXPECT_EQ(CollectiveFromName("broadcast"), OpType::kBroadcast);
  EXPECT_EQ(CollectiveFromName("reduce"), OpType::kReduce);
  EXPECT_EQ(CollectiveFromName("send"), OpType::kSend);
  EXPECT_EQ(CollectiveFromName("recv"), OpType::kRecv);
  EXPECT_EQ(CollectiveFromName("recv_anysource"), OpType::kRecv);
  EXPECT_EQ(CollectiveFromName("barrier"), OpType::kBarrier);
  EXPECT_EQ(CollectiveFromName("monitored_barrier"), OpType::kBarrier);
  EXPECT_EQ(CollectiveFromName("SendRecv"), std::nullopt);
  EXPECT_EQ(CollectiveFromName("gather"), std::nullopt);
  EXPECT_EQ(CollectiveFromName("wait"), std::nullopt);
  EXPECT_EQ(CollectiveFromName(""), std::nullopt);
}

TEST(KinetoNamesTest, CpuCommOps) {
  EXPECT_EQ(CpuCommFamilyOf("record_param_comms"),
            CpuCommFamily::kRecordParamComms);
  EXPECT_EQ(CpuCommFamilyOf("nccl:all_reduce"), CpuCommFamily::kNccl);
  EXPECT_EQ(CpuCommFamilyOf("c10d::allreduce_"), CpuCommFamily::kC10d);
  EXPECT_EQ(CpuCommFamilyOf("gloo:all_reduce"), CpuCommFamily::kGloo);
  EXPECT_EQ(CpuCommFamilyOf("aten::mm"), CpuCommFamily::kNone);
  EXPECT_EQ(CpuCommCollective("nccl:all_to_all"), OpType::kAllToAll);
  EXPECT_EQ(CpuCommCollective("nccl:_reduce_scatter_base"),
            OpType::kReduceScatter);
  EXPECT_EQ(CpuCommCollective("c10d::allreduce_"), OpType::kAllReduce);
  EXPECT_EQ(CpuCommCollective("c10d::recv_"), OpType::kRecv);
  EXPECT_EQ(CpuCommCollective("gloo:broadcast"), OpType::kBroadcast);
  EXPECT_EQ(CpuCommCollective("record_param_comms"), std::nullopt);
}

// The writer's names are the reader's: every spelling reads back as the
// collective it names (SendRecv as none: its CPU op says send or recv).
TEST(KinetoNamesTest, EveryWrittenNcclKernelReadsBack) {
  for (const NcclKernelSpelling& k : kNcclKernelSpellings) {
    for (std::string_view name : {k.before_2_19, k.since_2_19}) {
      EXPECT_TRUE(IsNcclKernel(name)) << name;
      EXPECT_EQ(NcclKernelCollective(name), k.collective) << name;
    }
    EXPECT_TRUE(k.before_2_19.starts_with(kNcclKernelPrefix));
    EXPECT_TRUE(k.since_2_19.starts_with(kNcclDevKernelPrefix));
  }
}

TEST(KinetoNamesTest, NcclKernelsOldAndNew) {
  EXPECT_TRUE(
      IsNcclKernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
  EXPECT_TRUE(
      IsNcclKernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"));
  EXPECT_FALSE(IsNcclKernel("void at::native::elementwise_kernel<128, 4>"));
  EXPECT_EQ(NcclKernelCollective(
                "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, "
                "unsigned long, ncclWork*)"),
            OpType::kAllReduce);
  EXPECT_EQ(NcclKernelCollective("ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)"),
            OpType::kBroadcast);
  EXPECT_EQ(NcclKernelCollective("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)"),
            OpType::kAllReduce);
  EXPECT_EQ(NcclKernelCollective("ncclDevKernel_AllGather_RING_LL(x)"),
            OpType::kAllGather);
  EXPECT_EQ(
      NcclKernelCollective("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"),
      OpType::kReduceScatter);
  EXPECT_EQ(NcclKernelCollective("ncclDevKernel_Reduce_Sum_f32_RING_LL(x)"),
            OpType::kReduce);
  EXPECT_EQ(NcclKernelCollective("ncclDevKernel_SendRecv(x)"), std::nullopt);
  EXPECT_EQ(
      NcclKernelCollective("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)"),
      std::nullopt);
  EXPECT_EQ(NcclKernelCollective("ncclDevKernel_Generic_1(x)"), std::nullopt);
}

TEST(KinetoNamesTest, ProfilerSteps) {
  EXPECT_EQ(ProfilerStepId("ProfilerStep#551"), 551);
  EXPECT_EQ(ProfilerStepId("ProfilerStep#0"), 0);
  EXPECT_EQ(ProfilerStepId("ProfilerStep#"), std::nullopt);
  EXPECT_EQ(ProfilerStepId("ProfilerStep#12a"), std::nullopt);
  EXPECT_EQ(ProfilerStepId("ProfilerStep#-1"), std::nullopt);
  EXPECT_EQ(ProfilerStepId("ProfilerStep"), std::nullopt);
  EXPECT_EQ(ProfilerStepId("Optimizer.step"), std::nullopt);
}

TEST(KinetoNamesTest, RankFromFileName) {
  EXPECT_EQ(RankFromFileName("rank-12.Jul_15_10_52_41.1074.pt.trace.json.gz"),
            12);
  EXPECT_EQ(RankFromFileName("/a/rank9/rank12.json"), 12);
  EXPECT_EQ(RankFromFileName("trace_8_rank_1.json"), 1);
  EXPECT_EQ(RankFromFileName("sampled_rank-3.json.gz"), 3);
  EXPECT_EQ(RankFromFileName("job_RANK-7.json"), 7);
  EXPECT_EQ(RankFromFileName("ranking_rank-5.json"), 5);
  EXPECT_EQ(RankFromFileName("mi250_minitoy_train_kineto.json.gz"),
            std::nullopt);
  EXPECT_EQ(RankFromFileName("rank-.json"), std::nullopt);
  EXPECT_EQ(RankFromFileName("rank-99999999999.json"), std::nullopt);
}

TEST(KinetoNamesTest, RankLists) {
  EXPECT_EQ(ParseRankList("[0, 1]"), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(ParseRankList("[]"), std::vector<int32_t>{});
  EXPECT_EQ(ParseRankList(" [ 3 ,4,5 ] "), (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ(ParseRankList("[0, 1"), std::nullopt);
  EXPECT_EQ(ParseRankList("[0, , 1]"), std::nullopt);
  EXPECT_EQ(ParseRankList("[0, 1] x"), std::nullopt);
  EXPECT_EQ(ParseRankList("0, 1"), std::nullopt);
  EXPECT_EQ(ParseRankList("[0, 1, ...]"), std::nullopt);
}

}  // namespace
}  // namespace strag::ingest::kineto
