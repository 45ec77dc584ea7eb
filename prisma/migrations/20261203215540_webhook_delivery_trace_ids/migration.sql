-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "trace_id" TEXT;

-- AlterTable
ALTER TABLE "webhook_delivery_batches" ADD COLUMN     "trace_id" TEXT;
